package dev.recount.stream.window;

import dev.recount.core.event.AdEvent;
import dev.recount.core.metrics.MetricsAccumulator;
import java.util.Objects;

/**
 * Part of one window key's totals, on its way from the de-dup operator to the window operator: the sums of some of
 * the window's unique events (see {@link WindowPartials}). The window operator adds partials up exactly as it used
 * to add events, so its firings, revisions and lateness are unchanged.
 *
 * <p>{@link #event} is set when the partial is one event sent on at once — an event for a window that has fired
 * already (within allowed lateness): it must re-fire the window on its own, and should the window operator find it
 * too late after all, the safety net can still route that very event to the backfill topic.
 *
 * <p>A Flink POJO (public fields, no-arg constructor), so it needs no Kryo.
 */
public final class WindowPartial {
    public long windowStart;
    public String campaignId;
    public String channelId;
    public MetricsAccumulator totals;
    /** The one event this partial holds when it was sent on at once; null for buffered sums. */
    public AdEvent event;

    public WindowPartial() {}

    public WindowPartial(
            long windowStart, String campaignId, String channelId, MetricsAccumulator totals, AdEvent event) {
        this.windowStart = windowStart;
        this.campaignId = Objects.requireNonNull(campaignId, "campaignId");
        this.channelId = Objects.requireNonNull(channelId, "channelId");
        this.totals = Objects.requireNonNull(totals, "totals");
        this.event = event;
    }

    /** A partial of exactly one event, sent on at once. */
    public static WindowPartial of(long windowStart, AdEvent event) {
        return new WindowPartial(
                windowStart, event.campaignId, event.channelId, new MetricsAccumulator().add(event), event);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WindowPartial p
                && windowStart == p.windowStart
                && campaignId.equals(p.campaignId)
                && channelId.equals(p.channelId)
                && totals.toMetrics().equals(p.totals.toMetrics())
                && Objects.equals(event, p.event);
    }

    @Override
    public int hashCode() {
        return Objects.hash(windowStart, campaignId, channelId, totals.toMetrics());
    }

    @Override
    public String toString() {
        return "WindowPartial{" + windowStart + ' ' + campaignId + '/' + channelId + ' ' + totals.toMetrics()
                + (event == null ? "" : " event " + event.eventId) + '}';
    }
}
