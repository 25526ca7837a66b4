package dev.recount.bench.kstreams;

import dev.recount.bench.DefaultSet;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureValues;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;

/**
 * {@code <schema>.kstreams_window_metrics}: the Kafka Streams peer's window rows, shaped like the Flink SQL peer's
 * {@code sql_window_metrics} (timestamps in UTC, measures as the default set declares them, a sum {@code numeric(38,0)}), keyed by (window_start, campaign,
 * channel); a later result for a key replaces the row.
 */
public final class WindowResultsTable {
    static final String NAME = "kstreams_window_metrics";

    private WindowResultsTable() {}

    public static void recreate(Connection c, String schema) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            s.execute("DROP TABLE IF EXISTS " + schema + "." + NAME);
            s.execute("CREATE TABLE " + schema + "." + NAME
                    + " (window_start timestamp NOT NULL, window_end timestamp NOT NULL,"
                    + " campaign_id text NOT NULL, channel_id text NOT NULL, "
                    + measureColumns(m -> m.name() + " " + m.sqlType())
                    + ", PRIMARY KEY (window_start, campaign_id, channel_id))");
        }
    }

    static String upsert(String schema) {
        return "INSERT INTO " + schema + "." + NAME
                + " (window_start, window_end, campaign_id, channel_id, " + measureColumns(Measure::name)
                + ") VALUES (?, ?, ?, ?, "
                + measureColumns(m -> "?") + ") ON CONFLICT (window_start, campaign_id, channel_id) DO UPDATE SET"
                + " window_end = EXCLUDED.window_end, " + measureColumns(m -> m.name() + " = EXCLUDED." + m.name());
    }

    static void bind(PreparedStatement upsert, WindowRow row) throws SQLException {
        upsert.setObject(1, utc(row.windowStart()));
        upsert.setObject(2, utc(row.windowEnd()));
        upsert.setString(3, row.campaignId());
        upsert.setString(4, row.channelId());
        List<Measure> measures = DefaultSet.SET.measures();
        for (int i = 0; i < measures.size(); i++) {
            if (measures.get(i).isCount()) upsert.setLong(5 + i, row.values().count(i));
            else upsert.setBigDecimal(5 + i, new BigDecimal(row.values().get(i)));
        }
    }

    /** The default set's measures, each as {@code column} writes it, comma-separated, in the set's order. */
    private static String measureColumns(java.util.function.Function<Measure, String> column) {
        return String.join(", ", DefaultSet.SET.measures().stream().map(column).toList());
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
    record WindowRow(long windowStart, long windowEnd, String campaignId, String channelId, MeasureValues values) {}
}
