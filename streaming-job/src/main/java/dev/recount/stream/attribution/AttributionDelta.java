package dev.recount.stream.attribution;

import dev.recount.core.attribution.AttributionAccumulator;
import dev.recount.core.event.AdEvent;
import dev.recount.core.window.WindowAlignment;

/**
 * A change to one window key's attribution metrics (window of the click or conversion, its campaign and channel):
 * what {@link AttributionJoin} decides, summed per key by {@link AttributionWindows}. A Flink POJO.
 */
public final class AttributionDelta {
    public long windowStart;
    public String campaignId;
    public String channelId;
    public AttributionAccumulator change;

    public AttributionDelta() {}

    public AttributionDelta(long windowStart, String campaignId, String channelId, AttributionAccumulator change) {
        this.windowStart = windowStart;
        this.campaignId = campaignId;
        this.channelId = channelId;
        this.change = change;
    }

    /** A click or conversion judged for the first time. */
    static AttributionDelta decided(AdEvent e, boolean attributed, WindowAlignment windows) {
        return new AttributionDelta(
                windows.windowStart(e.eventTs),
                e.campaignId,
                e.channelId,
                new AttributionAccumulator().decided(e, attributed));
    }

    /** A click or conversion judged unattributed before, attributed now. */
    static AttributionDelta attributedLater(AdEvent e, WindowAlignment windows) {
        return new AttributionDelta(
                windows.windowStart(e.eventTs),
                e.campaignId,
                e.channelId,
                new AttributionAccumulator().attributedLater(e));
    }

    @Override
    public String toString() {
        return "AttributionDelta{" + windowStart + ' ' + campaignId + '/' + channelId + ' ' + change.toMetrics() + '}';
    }
}
