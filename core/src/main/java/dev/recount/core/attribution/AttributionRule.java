package dev.recount.core.attribution;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.io.Serializable;
import java.time.Duration;

/**
 * When a click or conversion is attributed to an impression (CONTRACT, "Attribution"), stated once for the stream
 * job, the batch layer, the generator's ground truth and the tests:
 *
 * <ul>
 *   <li>only clicks and conversions are attributed, and only those with a {@code request_id}; without one they are
 *       unattributed (a click) or not counted at all (a conversion);</li>
 *   <li>an impression attributes it when it has the same {@code request_id} and its {@code event_ts} lies in
 *       {@code [click_ts - window, click_ts]}, both bounds inclusive: a click exactly one window after its
 *       impression is attributed, one millisecond later it is not, and one at the impression's own millisecond
 *       is;</li>
 *   <li>a click whose {@code event_ts} is before its impression's is <em>not</em> attributed: event time says it
 *       happened first, whatever order the records arrived in (a click that merely <em>arrives</em> before its
 *       impression is attributed once the impression arrives);</li>
 *   <li>events count once per {@code event_id}, as everywhere (a duplicate send of an impression or a click changes
 *       nothing); two different impressions sharing a {@code request_id} attribute a click once, through
 *       {@link #precedes the first} of those in its window (lowest {@code event_ts}, then {@code event_id}).</li>
 * </ul>
 *
 * <p>"Exists an impression in the window" rather than "the request's first impression ever, if it is in the
 * window": the latter would depend on impressions any distance in the past, so neither a state kept for one window
 * nor a batch read of the range plus one window could decide it exactly. With this rule, a click at {@code t}
 * depends only on impressions in {@code [t - window, t]}.
 *
 * <p>Results are per window of the click (or conversion), with its campaign and channel; see
 * {@link AttributionMetrics} for what is counted.
 */
public record AttributionRule(long windowMillis) implements Serializable {
    public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(30);

    public AttributionRule {
        if (windowMillis <= 0) throw new IllegalArgumentException("windowMillis must be positive, got " + windowMillis);
    }

    public static AttributionRule of(Duration window) {
        return new AttributionRule(window.toMillis());
    }

    /** True for the events attribution looks up an impression for: clicks and conversions. */
    public static boolean isAttributable(AdEvent e) {
        return e.eventType == EventType.CLICK || e.eventType == EventType.CONVERSION;
    }

    /** True for the events that can attribute: impressions with a request id. */
    public static boolean isCandidateImpression(AdEvent e) {
        return e.eventType == EventType.IMPRESSION && e.requestId != null;
    }

    /** Whether an impression at {@code impressionTs} attributes a click (or conversion) at {@code clickTs}. */
    public boolean attributes(long impressionTs, long clickTs) {
        return impressionTs <= clickTs && clickTs - impressionTs <= windowMillis;
    }

    /** Whether {@code impression} attributes {@code click}: same request id, in the window. */
    public boolean attributes(AdEvent impression, AdEvent click) {
        return isCandidateImpression(impression)
                && isAttributable(click)
                && click.requestId != null
                && click.requestId.equals(impression.requestId)
                && attributes(impression.eventTs, click.eventTs);
    }

    /** The earliest impression time that can attribute a click at {@code clickTs}: what a batch must read back to. */
    public long earliestImpressionTs(long clickTs) {
        return clickTs - windowMillis;
    }

    /** The latest click time an impression at {@code impressionTs} can attribute: how long it must be kept. */
    public long latestClickTs(long impressionTs) {
        return impressionTs + windowMillis;
    }

    /**
     * The order among impressions of one request: the first is the one a click is attributed through (lowest
     * {@code event_ts}, then lowest {@code event_id}).
     */
    public static boolean precedes(long ts, String eventId, long otherTs, String otherEventId) {
        return ts != otherTs ? ts < otherTs : eventId.compareTo(otherEventId) < 0;
    }

    /**
     * {@link #attributes(long, long)} as a SQL condition over two epoch-millisecond columns (Spark, PostgreSQL):
     * {@code impression_ts BETWEEN click_ts - window AND click_ts}.
     */
    public String sqlCondition(String impressionTsColumn, String clickTsColumn) {
        return impressionTsColumn + " BETWEEN " + clickTsColumn + " - " + windowMillis + " AND " + clickTsColumn;
    }
}
