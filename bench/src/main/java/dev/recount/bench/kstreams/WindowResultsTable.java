package dev.recount.bench.kstreams;

import dev.recount.core.metrics.WindowMetrics;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * {@code <schema>.kstreams_window_metrics}: the Kafka Streams peer's window rows, shaped like the Flink SQL peer's
 * {@code sql_window_metrics} (timestamps in UTC, spend {@code numeric(38,0)}), keyed by (window_start, campaign,
 * channel); a later result for a key replaces the row.
 */
public final class WindowResultsTable {
    static final String NAME = "kstreams_window_metrics";

    private WindowResultsTable() {}

    public static void recreate(Connection c, String schema) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            s.execute("DROP TABLE IF EXISTS " + schema + "." + NAME);
            s.execute(
                    "CREATE TABLE " + schema + "." + NAME
                            + " (window_start timestamp NOT NULL, window_end timestamp NOT NULL,"
                            + " campaign_id text NOT NULL, channel_id text NOT NULL, impressions bigint, clicks bigint, conversions bigint,"
                            + " spend_micros numeric(38,0), events bigint, PRIMARY KEY (window_start, campaign_id, channel_id))");
        }
    }

    static String upsert(String schema) {
        return "INSERT INTO " + schema + "." + NAME
                + " (window_start, window_end, campaign_id, channel_id, impressions,"
                + " clicks, conversions, spend_micros, events) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT (window_start, campaign_id, channel_id) DO UPDATE SET window_end = EXCLUDED.window_end,"
                + " impressions = EXCLUDED.impressions, clicks = EXCLUDED.clicks, conversions = EXCLUDED.conversions,"
                + " spend_micros = EXCLUDED.spend_micros, events = EXCLUDED.events";
    }

    static void bind(PreparedStatement upsert, WindowRow row) throws SQLException {
        WindowMetrics m = row.metrics();
        upsert.setObject(1, utc(row.windowStart()));
        upsert.setObject(2, utc(row.windowEnd()));
        upsert.setString(3, row.campaignId());
        upsert.setString(4, row.channelId());
        upsert.setLong(5, m.impressions());
        upsert.setLong(6, m.clicks());
        upsert.setLong(7, m.conversions());
        upsert.setBigDecimal(8, new BigDecimal(m.spendMicros()));
        upsert.setLong(9, m.events());
    }

    /** "rows, events" of the table. */
    public static long[] rowsAndEvents(Connection c, String schema) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs =
                        s.executeQuery("SELECT count(*), coalesce(sum(events), 0) FROM " + schema + "." + NAME)) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2)};
        }
    }

    private static LocalDateTime utc(long epochMillis) {
        return LocalDateTime.ofEpochSecond(
                Math.floorDiv(epochMillis, 1000), (int) Math.floorMod(epochMillis, 1000) * 1_000_000, ZoneOffset.UTC);
    }

    /** One window result. */
    record WindowRow(long windowStart, long windowEnd, String campaignId, String channelId, WindowMetrics metrics) {}
}
