package dev.recount.reconcile.bench;

import dev.recount.db.Role;
import dev.recount.db.tables.ServingSettingsTable;
import dev.recount.testkit.LocalStack;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * How fast finance's read side (migration V12: ratios, hourly and daily rollups, sliding sums, all computed from the
 * minute windows at read time) answers on a year of data. Not a test: prints figures (docs/benchmarks.md, "Rollups at
 * a year of data"). Loads a year of 1-minute windows for campaigns × channels into all three sources, as they are
 * after a year of nightly reconciliations: every window in the stream and the batch tables, all but the last day
 * finalized in window_corrections by one succeeded run per day; the zone is Europe/Berlin. Then runs each query as the
 * finance login, {@code rounds} times, and prints the first, the fastest and the median time.
 *
 * <p>Arguments: {@code [campaigns (10)] [channels (2)] [days (365)] [rounds (5)]}. Starts its own embedded stack.
 */
public final class RollupBench {
    static final Instant END = Instant.parse("2026-11-30T00:00:00Z");
    static final ZoneId ZONE = ZoneId.of("Europe/Berlin");

    public static void main(String[] args) throws Exception {
        int campaigns = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int channels = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int days = args.length > 2 ? Integer.parseInt(args[2]) : 365;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        Instant start = END.minus(Duration.ofDays(days));
        LocalStack stack = LocalStack.shared();
        String schema = stack.createMigratedSchema("bench_rollups");
        long windows = (long) days * 1440 * campaigns * channels;
        System.out.printf(
                Locale.ROOT,
                "loading %,d windows per source table (%d days x %d campaigns x %d channels) into %s ...%n",
                windows,
                days,
                campaigns,
                channels,
                schema);
        long t0 = System.nanoTime();
        try (Connection c = stack.adminConnection()) {
            c.setSchema(schema);
            load(c, start, campaigns, channels, days);
            ServingSettingsTable.recordTimeZone(c, ZONE, END);
            try (Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery(
                            "SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c"
                                    + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'")) {
                rs.next();
                System.out.printf(
                        Locale.ROOT,
                        "loaded in %.0f s; tables with their indexes: %s%n",
                        (System.nanoTime() - t0) / 1e9,
                        rs.getString(1));
            }
        }

        LocalDate lastDay = END.atZone(ZONE).toLocalDate();
        String campaign = "'campaign-" + (campaigns / 2) + "'";
        List<String[]> queries = List.of(
                new String[] {
                    "daily, one campaign, 90 days",
                    "SELECT * FROM daily_metrics('" + lastDay.minusDays(90) + "', '" + lastDay
                            + "') WHERE campaign_id = " + campaign
                },
                new String[] {
                    "hourly, one campaign, 90 days",
                    "SELECT * FROM hourly_metrics('" + END.minus(Duration.ofDays(90)) + "', '" + END
                            + "') WHERE campaign_id = " + campaign
                },
                new String[] {
                    "minutes summed by hand, one campaign, 90 days (reference)",
                    "SELECT campaign_id, channel_id,"
                            + " sum(impressions), sum(clicks), sum(conversions), sum(spend_micros), sum(events),"
                            + " ctr(sum(clicks), sum(impressions)) FROM window_metrics WHERE campaign_id = " + campaign
                            + " AND window_start >= '" + END.minus(Duration.ofDays(90)) + "' AND window_start < '" + END
                            + "' GROUP BY 1, 2"
                },
                new String[] {
                    "daily, all campaigns, 7 days",
                    "SELECT * FROM daily_metrics('" + lastDay.minusDays(7) + "', '" + lastDay + "')"
                },
                new String[] {
                    "sliding 5 min, one campaign, last hour",
                    "SELECT * FROM sliding_metrics(5, '" + END.minus(Duration.ofHours(1)) + "', '" + END
                            + "') WHERE campaign_id = " + campaign
                },
                new String[] {
                    "sliding 60 min, one campaign, last day",
                    "SELECT * FROM sliding_metrics(60, '" + END.minus(Duration.ofDays(1)) + "', '" + END
                            + "') WHERE campaign_id = " + campaign
                });

        System.out.println();
        System.out.println("| query | rows | first ms | fastest ms | median ms |");
        System.out.println("|---|---:|---:|---:|---:|");
        try (Connection c = stack.loginConnection(schema, Role.FINANCE);
                Statement st = c.createStatement()) {
            for (String[] q : queries) {
                List<Double> ms = new ArrayList<>();
                long rows = 0;
                for (int i = 0; i < rounds; i++) {
                    long q0 = System.nanoTime();
                    rows = 0;
                    try (ResultSet rs = st.executeQuery(q[1])) {
                        while (rs.next()) rows++;
                    }
                    ms.add((System.nanoTime() - q0) / 1e6);
                }
                double first = ms.get(0);
                Collections.sort(ms);
                System.out.printf(
                        Locale.ROOT,
                        "| %s | %,d | %.0f | %.0f | %.0f |%n",
                        q[0],
                        rows,
                        first,
                        ms.get(0),
                        ms.get(ms.size() / 2));
            }
            System.out.println();
            System.out.println("plan of the first query (EXPLAIN ANALYZE, BUFFERS):");
            try (ResultSet rs = st.executeQuery("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + queries.get(0)[1])) {
                while (rs.next()) System.out.println("  " + rs.getString(1));
            }
        }
        System.out.println();
        System.out.printf(
                Locale.ROOT,
                "machine: %d cores, Java %s; range ends %s%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                END.atOffset(ZoneOffset.UTC));
        System.exit(0);
    }

    /** Generated server-side (generate_series): loading is not what is measured. */
    static void load(Connection c, Instant start, int campaigns, int channels, int days) throws Exception {
        Instant lastDay = END.minus(Duration.ofDays(1));
        String keys = " FROM generate_series(timestamptz '" + start + "', timestamptz '" + END
                + "' - interval '1 minute',"
                + " interval '1 minute') ts, generate_series(0, " + (campaigns - 1) + ") cp, generate_series(0, "
                + (channels - 1)
                + ") ch, LATERAL (SELECT (extract(epoch FROM ts)::bigint / 60 * 7 + cp * 13 + ch * 17) % 900"
                + " + 100 AS imp) x";
        String values = "ts, ts + interval '1 minute', 'campaign-' || cp, 'channel-' || ch, imp, imp / 20, imp / 200,"
                + " imp * 1250, imp + imp / 20 + imp / 200";
        try (Statement st = c.createStatement()) {
            st.execute("SET synchronous_commit = off");
            st.execute("SET maintenance_work_mem = '512MB'");
            // Nothing here reconciles, so nothing reads window_writes (V21): the year's rows are not logged there,
            // one log row per row, by the tables' triggers.
            st.execute("SET recount.window_writes_logged = 'on'");
            st.execute(
                    "INSERT INTO batch_runs (run_id, mode, status, range_from, range_to) VALUES (1, 'range', 'succeeded',"
                            + " '" + start + "', '" + END + "')");
            time(
                    st,
                    "stream_window_metrics",
                    "INSERT INTO stream_window_metrics (window_start, window_end, campaign_id,"
                            + " channel_id, impressions, clicks, conversions, spend_micros, events, revision) SELECT "
                            + values + ", 1" + keys);
            time(
                    st,
                    "batch_window_metrics",
                    "INSERT INTO batch_window_metrics (window_start, window_end, campaign_id,"
                            + " channel_id, impressions, clicks, conversions, spend_micros, events, run_id) SELECT "
                            + values + ", 1" + keys);
            // One succeeded run per day, as nightly reconciliation leaves them (the last day is not reconciled yet).
            st.execute("INSERT INTO reconciliation_runs (range_from, range_to, status, verdict, finished_at)"
                    + " SELECT d, d + interval '1 day', 'succeeded', 'within_tolerance', d + interval '1 day 2 hours'"
                    + " FROM generate_series(timestamptz '" + start + "', timestamptz '" + lastDay
                    + "' - interval '1 day',"
                    + " interval '1 day') d");
            time(
                    st,
                    "window_corrections",
                    "INSERT INTO window_corrections (window_start, window_end, campaign_id, channel_id,"
                            + " impressions, clicks, conversions, spend_micros, events, reconciliation_run_id, batch_run_id)"
                            + " SELECT window_start, window_end, campaign_id, channel_id, impressions, clicks, conversions,"
                            + " spend_micros, events, 1, run_id FROM batch_window_metrics WHERE window_start < '"
                            + lastDay + "'");
            for (String t : List.of(
                    "stream_window_metrics", "batch_window_metrics", "window_corrections", "reconciliation_runs")) {
                st.execute("VACUUM ANALYZE " + t);
            }
        }
    }

    private static void time(Statement st, String what, String sql) throws Exception {
        long t0 = System.nanoTime();
        int n = st.executeUpdate(sql);
        System.out.printf(Locale.ROOT, "  %s: %,d rows in %.0f s%n", what, n, (System.nanoTime() - t0) / 1e9);
    }
}
