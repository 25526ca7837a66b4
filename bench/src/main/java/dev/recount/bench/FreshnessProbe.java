package dev.recount.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Freshness: polls stream_window_metrics every 200 ms and notes when each window first becomes visible; its delay is
 * (first seen) - (window_end + out-of-orderness). Meaningful when event time runs with the wall clock (generate
 * --rate with --start now). Args: schema seconds [outOfOrdernessMillis] [skipFirstWindows].
 * Prints p50/p99/max over the windows seen, {@code RESULT freshness <p50ms> <p99ms> <windows>}.
 */
public final class FreshnessProbe {
    public static void main(String[] args) throws Exception {
        String schema = args[0];
        long seconds = Long.parseLong(args[1]);
        long outOfOrderness = args.length > 2 ? Long.parseLong(args[2]) : 30_000;
        int skip = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        Map<Long, Long> firstSeen = new HashMap<>();
        long end = System.currentTimeMillis() + seconds * 1000;
        try (Connection c = DriverManager.getConnection(
                        System.getenv("RECOUNT_JDBC_URL"),
                        System.getenv("PGUSER"),
                        System.getenv().getOrDefault("PGPASSWORD", ""));
                Statement s = c.createStatement()) {
            while (System.currentTimeMillis() < end) {
                try (ResultSet rs =
                        s.executeQuery("SELECT DISTINCT (extract(epoch FROM window_end) * 1000)::bigint FROM " + schema
                                + ".stream_window_metrics")) {
                    long now = System.currentTimeMillis();
                    while (rs.next()) firstSeen.putIfAbsent(rs.getLong(1), now);
                } catch (java.sql.SQLException notYet) {
                    // table not there yet: the job creates nothing, but the schema may be migrating
                }
                Thread.sleep(200); // a polling interval, not synchronisation
            }
        }
        List<Long> windows = new ArrayList<>(firstSeen.keySet());
        windows.sort(null);
        // The first windows were open before the probe started (or start-up skews them): leave them out.
        List<Long> delays = new ArrayList<>();
        for (int i = Math.min(skip, windows.size()); i < windows.size(); i++) {
            long w = windows.get(i);
            delays.add(firstSeen.get(w) - (w + outOfOrderness));
        }
        delays.sort(null);
        if (delays.isEmpty()) {
            System.out.println("RESULT freshness NaN NaN 0");
            return;
        }
        long p50 = delays.get((int) Math.floor(0.50 * (delays.size() - 1)));
        long p99 = delays.get((int) Math.ceil(0.99 * (delays.size() - 1)));
        System.out.printf(
                Locale.ROOT,
                "freshness over %d windows: p50 %d ms, p99 %d ms, max %d ms, all %s%n",
                delays.size(),
                p50,
                p99,
                delays.get(delays.size() - 1),
                delays);
        System.out.printf(Locale.ROOT, "RESULT freshness %d %d %d%n", p50, p99, delays.size());
    }
}
