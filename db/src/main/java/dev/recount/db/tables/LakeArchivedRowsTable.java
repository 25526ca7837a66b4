package dev.recount.db.tables;

import dev.recount.core.lake.LakeLayout;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;

/**
 * {@code lake_archived_rows} (V24): how many rows each commit of the stream job archived into each lake hour. The
 * stream records them ({@link #record}); the batch layer compares the lake against their sums ({@link #rowsByHour})
 * before it recomputes from it, and forgets the hours its retention deleted ({@link #forgetBefore}).
 */
public final class LakeArchivedRowsTable {
    public static final String TABLE = "lake_archived_rows";

    private LakeArchivedRowsTable() {}

    /**
     * Records one commit's counts; a second call with the same {@code commitId} (a commit repeated after a restart)
     * inserts nothing.
     *
     * @param rowsByHour rows per hour, keyed by the hour's start in epoch milliseconds; counts of zero are skipped
     */
    public static void record(Connection conn, UUID commitId, Map<Long, Long> rowsByHour) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + TABLE
                + " (commit_id, event_hour, rows) VALUES (?, ?, ?) ON CONFLICT (commit_id, event_hour) DO NOTHING")) {
            int batched = 0;
            for (Map.Entry<Long, Long> e : rowsByHour.entrySet()) {
                if (e.getValue() <= 0) continue;
                if (LakeLayout.hourStart(e.getKey()) != e.getKey())
                    throw new IllegalArgumentException("not the start of an hour: " + e.getKey());
                ps.setObject(1, commitId);
                Timestamps.bind(ps, 2, e.getKey());
                ps.setLong(3, e.getValue());
                ps.addBatch();
                batched++;
            }
            if (batched > 0) ps.executeBatch();
        }
    }

    /** The rows archived per hour whose start is in {@code [fromMillis, toMillis)}; hours without any are absent. */
    public static SortedMap<Long, Long> rowsByHour(Connection conn, long fromMillis, long toMillis)
            throws SQLException {
        SortedMap<Long, Long> rows = new TreeMap<>();
        try (PreparedStatement ps = conn.prepareStatement("SELECT event_hour, sum(rows)::bigint AS rows FROM " + TABLE
                + " WHERE event_hour >= ? AND event_hour < ? GROUP BY event_hour")) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) rows.put(Timestamps.read(rs, "event_hour"), rs.getLong("rows"));
            }
        }
        return rows;
    }

    /** Forgets every hour before {@code horizonMillis} (the lake's retention deleted them); returns the rows deleted. */
    public static int forgetBefore(Connection conn, long horizonMillis) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + TABLE + " WHERE event_hour < ?")) {
            Timestamps.bind(ps, 1, horizonMillis);
            return ps.executeUpdate();
        }
    }
}
