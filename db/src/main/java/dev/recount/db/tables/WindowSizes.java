package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The window sizes a window table holds over a range, read from its rows ({@code window_end - window_start}: every
 * row records the size the job that wrote it ran with). Stream and batch results are compared key by key, so a
 * stream that ran with {@code --window 2m} next to a 1-minute batch would make every key a mismatch and reconcile
 * would "correct" all of them; backfill and reconcile refuse such a range instead ({@link #mismatch}).
 */
public final class WindowSizes {
    private WindowSizes() {}

    /** The distinct window sizes, in milliseconds, of the rows of {@code table} whose window starts in the range. */
    public static SortedSet<Long> in(Connection conn, String table, long fromMillis, long toMillis)
            throws SQLException {
        String sql = "SELECT DISTINCT (extract(epoch FROM window_end - window_start) * 1000)::bigint AS size_ms FROM "
                + table + " WHERE window_start >= ? AND window_start < ?";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            Timestamps.bind(ps, 1, fromMillis);
            Timestamps.bind(ps, 2, toMillis);
            SortedSet<Long> sizes = new TreeSet<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) sizes.add(rs.getLong(1));
            }
            return sizes;
        }
    }

    /**
     * Why the range may not be compared with windows of {@code expectedMillis}, if it may not: some rows of
     * {@code table} in it have another size. The message names both sizes and what to do.
     */
    public static Optional<String> mismatch(
            Connection conn, String table, long fromMillis, long toMillis, long expectedMillis) throws SQLException {
        SortedSet<Long> other = new TreeSet<>(in(conn, table, fromMillis, toMillis));
        other.remove(expectedMillis);
        if (other.isEmpty()) return Optional.empty();
        return Optional.of(
                table + " holds windows of " + describe(other) + " in this range, not "
                        + describe(new TreeSet<>(java.util.List.of(expectedMillis)))
                        + ": the stream job ran with another"
                        + " window.size; recompute and reconcile with the size it ran with (window.size), or delete those rows");
    }

    /**
     * Which of the windows starting at {@code windowStarts} (each {@code expectedMillis} long) hold rows of
     * {@code table} of another size that start or end inside them: what {@link #mismatch} refuses, window by window.
     * One statement, each window read through the table's primary key and its {@code window_end} index, so windows
     * days apart cost no more than their own rows. A row that starts before a window and ends after it (a size more
     * than twice the window's) is not seen; {@link #mismatch} sees it only where its start lies in its range.
     */
    public static SortedSet<Long> windowsHoldingOtherSizes(
            Connection conn, String table, java.util.Collection<Long> windowStarts, long expectedMillis)
            throws SQLException {
        SortedSet<Long> other = new TreeSet<>();
        if (windowStarts.isEmpty()) return other;
        String otherSize = " AND (extract(epoch FROM t.window_end - t.window_start) * 1000)::bigint <> ?";
        String sql = "SELECT DISTINCT (extract(epoch FROM w.start) * 1000)::bigint FROM unnest(?::timestamptz[]) AS"
                + " w(start) WHERE EXISTS (SELECT 1 FROM " + table + " t WHERE t.window_start >= w.start"
                + " AND t.window_start < w.start + ? * interval '1 millisecond'" + otherSize + ")"
                + " OR EXISTS (SELECT 1 FROM " + table + " t WHERE t.window_end > w.start"
                + " AND t.window_end <= w.start + ? * interval '1 millisecond'" + otherSize + ")";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setArray(1, Timestamps.array(conn, windowStarts));
            for (int p = 2; p <= 5; p++) ps.setLong(p, expectedMillis);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) other.add(rs.getLong(1));
            }
        }
        return other;
    }

    /**
     * Why {@code table} may not be written with windows of {@code expectedMillis}, if it may not: its oldest or newest
     * row (by window_start, two probes of its primary key, whatever its size) has another size. Windows of two sizes
     * in one schema overlap, and the serving view would count their events in both. A size changed in between
     * and back again is not seen; backfill and reconcile refuse such a range ({@link #mismatch}).
     */
    public static Optional<String> atEndsOtherThan(Connection conn, String table, long expectedMillis)
            throws SQLException {
        SortedSet<Long> other = new TreeSet<>();
        for (String order : new String[] {"ASC", "DESC"}) {
            String sql = "SELECT (extract(epoch FROM window_end - window_start) * 1000)::bigint FROM " + table
                    + " ORDER BY window_start " + order + " LIMIT 1";
            try (PreparedStatement ps = conn.prepareStatement(sql);
                    ResultSet rs = ps.executeQuery()) {
                if (rs.next() && rs.getLong(1) != expectedMillis) other.add(rs.getLong(1));
            }
        }
        if (other.isEmpty()) return Optional.empty();
        return Optional.of(table + " holds windows of " + describe(other) + ", not "
                + describe(new TreeSet<>(java.util.List.of(expectedMillis))));
    }

    private static String describe(SortedSet<Long> sizes) {
        StringBuilder s = new StringBuilder();
        for (long ms : sizes) {
            if (s.length() > 0) s.append(", ");
            s.append(dev.recount.core.config.Durations.format(Duration.ofMillis(ms)));
        }
        return s.toString();
    }
}
