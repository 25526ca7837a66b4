package dev.recount.bench;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.db.tables.WindowWritesTable;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The PostgreSQL side of docs/scaling.md: how many window rows per second the stream's sink can write, with exactly
 * its statement ({@link StreamWindowMetricsTable#upsert} of the default set, the revision guard included) issued as its committer does —
 * one JDBC batch per checkpoint and connection, committed as one transaction — into a table that already holds
 * {@code preload} rows (the size a serving table reaches). Two phases: new keys (INSERT path) and the same keys
 * fired again with revision 2 (the UPDATE path, what late events cost), each with 1, then 2 connections.
 *
 * <p>Arguments: {@code SCHEMA PRELOAD ROWS_PER_PHASE BATCH}. Needs a migrated schema ({@code Admin schema}) and the
 * administrator in PGUSER/PGPASSWORD (it writes as the table's owner; privileges do not change the cost).
 * Prints {@code RESULT upsert <phase> <connections> <rows/s>} lines.
 */
public final class UpsertBench {
    private static final long MINUTE = 60_000L;

    /** The default set's table: measures impressions, clicks, conversions, spend_micros, events. */
    private static final StreamWindowMetricsTable TABLE = new StreamWindowMetricsTable(new SetTables(DefaultSet.SET));

    public static void main(String[] args) throws Exception {
        String schema = args[0];
        long preload = Long.parseLong(args[1]);
        int rows = Integer.parseInt(args[2]);
        int batch = Integer.parseInt(args[3]);
        String url = System.getenv("RECOUNT_JDBC_URL");
        String user = System.getenv("PGUSER");
        String password = System.getenv().getOrDefault("PGPASSWORD", "");

        try (Connection c = DriverManager.getConnection(url, user, password);
                Statement s = c.createStatement()) {
            s.execute("SET search_path TO " + schema);
            long t0 = System.nanoTime();
            // One transaction that logs its windows itself (window_writes, V21), as the stream's committer does: the
            // table's trigger then skips its rows.
            c.setAutoCommit(false);
            WindowWritesTable.markLogged(c);
            // Preloaded windows lie before 1970-01-10; the measured ones after, so they are new keys.
            s.execute(
                    "INSERT INTO stream_window_metrics (window_start, window_end, campaign_id, channel_id, impressions,"
                            + " clicks, conversions, spend_micros, events, revision, updated_at)"
                            + " SELECT to_timestamp(w * 60), to_timestamp(w * 60 + 60), 'cmp-' || (k % 1000), 'ch-' || (k / 1000),"
                            + " 10, 1, 0, 12345, 11, 1, now() FROM generate_series(0, " + (preload - 1) + ") g(i),"
                            + " LATERAL (SELECT i / 10000 AS w, i % 10000 AS k) x");
            s.execute("INSERT INTO " + WindowWritesTable.TABLE + " (side, window_start) SELECT 'stream',"
                    + " to_timestamp(w * 60) FROM generate_series(0, " + ((preload - 1) / 10000) + ") w");
            c.commit();
            c.setAutoCommit(true);
            s.execute("ANALYZE stream_window_metrics");
            System.out.printf(Locale.ROOT, "preloaded %,d rows in %.1f s%n", preload, (System.nanoTime() - t0) / 1e9);
            try (ResultSet rs =
                    s.executeQuery("SELECT pg_size_pretty(pg_total_relation_size('stream_window_metrics'))")) {
                rs.next();
                System.out.println("table + indexes: " + rs.getString(1));
            }
        }

        long firstWindow = 1_000_000L; // minutes after the epoch: far beyond the preloaded ones
        for (int connections : new int[] {1, 2}) {
            List<List<StreamWindowMetricsTable.Row>> perConnection = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                List<StreamWindowMetricsTable.Row> mine = new ArrayList<>();
                for (int i = c; i < rows; i += connections) mine.add(row(firstWindow, i, 1));
                perConnection.add(mine);
            }
            report("insert", connections, rows, time(url, user, password, schema, perConnection, batch));
            List<List<StreamWindowMetricsTable.Row>> again = new ArrayList<>();
            for (List<StreamWindowMetricsTable.Row> mine : perConnection) {
                again.add(mine.stream()
                        .map(r -> new StreamWindowMetricsTable.Row(bump(r.window()), 2))
                        .toList());
            }
            report("update", connections, rows, time(url, user, password, schema, again, batch));
            firstWindow += rows / 10_000 + 10;
        }
    }

    private static StreamWindowMetricsTable.Row row(long firstWindowMinute, int i, int revision) {
        long start = (firstWindowMinute + i / 10_000) * MINUTE;
        WindowKey key = WindowKey.of(start, "cmp-" + (i % 1000), "ch-" + (i % 10_000 / 1000));
        return new StreamWindowMetricsTable.Row(
                new WindowRow(key, start + MINUTE, MeasureValues.of(10, 1, 0, 12345L, 11)), revision);
    }

    private static WindowRow bump(WindowRow w) {
        long[] oneMoreImpression = new long[DefaultSet.SET.measures().size()];
        oneMoreImpression[DefaultSet.SET.measureIndex("impressions")] = 1;
        oneMoreImpression[DefaultSet.SET.eventsIndex()] = 1;
        return new WindowRow(w.key(), w.windowEndMillis(), w.values().plus(MeasureValues.of(oneMoreImpression)));
    }

    /** Seconds for every connection to write its rows, {@code batch} rows per transaction. */
    private static double time(
            String url,
            String user,
            String password,
            String schema,
            List<List<StreamWindowMetricsTable.Row>> perConnection,
            int batch)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(perConnection.size());
        try {
            List<Connection> connections = new ArrayList<>();
            for (int i = 0; i < perConnection.size(); i++) {
                Connection c = DriverManager.getConnection(
                        url + (url.contains("?") ? "&" : "?") + "reWriteBatchedInserts=false", user, password);
                c.setSchema(schema);
                c.setAutoCommit(false);
                connections.add(c);
            }
            long t0 = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < perConnection.size(); i++) {
                Connection c = connections.get(i);
                List<StreamWindowMetricsTable.Row> mine = perConnection.get(i);
                done.add(pool.submit(() -> {
                    for (int from = 0; from < mine.size(); from += batch) {
                        List<StreamWindowMetricsTable.Row> notApplied =
                                TABLE.upsert(c, mine.subList(from, Math.min(mine.size(), from + batch)));
                        if (!notApplied.isEmpty())
                            throw new IllegalStateException(notApplied.size() + " rows not applied");
                        c.commit();
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) f.get();
            double seconds = (System.nanoTime() - t0) / 1e9;
            for (Connection c : connections) c.close();
            return seconds;
        } finally {
            pool.shutdown();
        }
    }

    private static void report(String phase, int connections, int rows, double seconds) {
        System.out.printf(
                Locale.ROOT,
                "RESULT upsert %s %d %.0f  (%,d rows in %.1f s)%n",
                phase,
                connections,
                rows / seconds,
                rows,
                seconds);
    }
}
