package dev.recount.testkit;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import java.math.BigInteger;

/**
 * The default metric set as tests write it: its measures in order (impressions, clicks, conversions, spend_micros,
 * events) and its key (campaign_id, channel_id), so a fixture reads like the row it stands for.
 */
public final class DefaultSet {
    public static final MetricSet SET = MetricSets.defaults().defaultSet().orElseThrow();
    public static final SetTables TABLES = new SetTables(SET);
    /** Measure positions in {@link #SET}. */
    public static final int IMPRESSIONS = 0, CLICKS = 1, CONVERSIONS = 2, SPEND = 3, EVENTS = 4;

    private DefaultSet() {}

    public static MeasureValues values(long impressions, long clicks, long conversions, long spendMicros, long events) {
        return MeasureValues.of(impressions, clicks, conversions, spendMicros, events);
    }

    public static MeasureValues values(
            long impressions, long clicks, long conversions, BigInteger spendMicros, long events) {
        return new MeasureValues(
                BigInteger.valueOf(impressions),
                BigInteger.valueOf(clicks),
                BigInteger.valueOf(conversions),
                spendMicros,
                BigInteger.valueOf(events));
    }

    public static WindowKey key(long windowStartMillis, String campaignId, String channelId) {
        return WindowKey.of(windowStartMillis, campaignId, channelId);
    }
}
