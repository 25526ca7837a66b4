package dev.recount.bench;

import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.Locale;

/**
 * The batch job's last step over one day: {@link BatchWindowMetricsTable#replaceFromStaging} of 1,440 one-minute
 * windows of staged rows, called as the job calls it (one transaction with the run's status), four times into one
 * table: into an empty table; every row changed and 2 % of the keys gone; the same rows again (a backfill rerun over
 * a day that did not change); 1 % of the keys with one more impression (a day a few late events touched). The
 * staged rows are generated server-side so only the replace is timed.
 *
 * <p>Arguments: {@code SCHEMA [CAMPAIGNS]} (7 channels each; 100 campaigns: 987,840 keys). Needs a migrated schema
 * ({@code Admin schema}) and the administrator in PGUSER/PGPASSWORD. Prints one {@code RESULT replace <round>
 * <seconds> <staged> <inserted or changed> <deleted> <windows logged>} line per round.
 */
public final class BatchReplaceBench {
    private static final Instant DAY = Instant.parse("2026-11-28T00:00:00Z");
    private static final String[] ROUNDS = {"into_empty", "all_changed", "unchanged", "one_percent_changed"};

    public static void main(String[] args) throws Exception {
        String schema = args[0];
        int campaigns = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        long from = DAY.toEpochMilli();
        long to = from + 86_400_000L;
        BatchWindowMetricsTable table = new BatchWindowMetricsTable(new SetTables(DefaultSet.SET));
        try (Connection c = Admin.connectTo(schema);
                Statement s = c.createStatement()) {
            for (int round = 0; round < ROUNDS.length; round++) {
                long run = BatchRunsTable.start(c, BatchRunsTable.Mode.RANGE, from, to, false);
                long staged = stage(s, run, campaigns, round);
                c.setAutoCommit(false);
                // As BackfillRunner's commit: the planner must not pick a nested loop over the staging table.
                s.execute("SET LOCAL enable_nestloop = off");
                long t0 = System.nanoTime();
                BatchWindowMetricsTable.ReplaceResult r =
                        table.replaceFromStaging(c, new BatchWindowMetricsTable.Range(from, to), run);
                BatchRunsTable.succeed(c, run, staged, r.written(), r.deleted(), null, null, null);
                c.commit();
                double seconds = (System.nanoTime() - t0) / 1e9;
                c.setAutoCommit(true);
                // Inserted or changed: the rows now carrying this run's id (a replace that rewrites every row
                // gives them all its id; one that leaves identical rows alone, only those it wrote).
                long changed = count(s, "SELECT count(*) FROM batch_window_metrics WHERE run_id = " + run);
                long logged = count(s, "SELECT count(*) FROM window_writes WHERE side = 'batch'");
                s.execute("DELETE FROM window_writes");
                System.out.printf(
                        Locale.ROOT,
                        "RESULT replace %s %.2f %d %d %d %d%n",
                        ROUNDS[round],
                        seconds,
                        staged,
                        changed,
                        r.deleted(),
                        logged);
            }
        }
    }

    /**
     * Stages the round's rows for {@code run}: the same keys but 2 % in every round after the first, values by
     * round (round 2 and 3 equal, round 4 one more impression on 1 % of the keys).
     */
    private static long stage(Statement s, long run, int campaigns, int round) throws Exception {
        int base = round == 0 ? 1 : 2;
        String bump = round == 3 ? " + CASE WHEN (w * 7 + cp * 3 + ch) % 100 = 0 THEN 1 ELSE 0 END" : "";
        long staged = s.executeUpdate("INSERT INTO batch_window_metrics_staging (run_id, window_start, window_end,"
                + " campaign_id, channel_id, impressions, clicks, conversions, spend_micros, events) SELECT " + run
                + ", ts, ts + interval '1 minute', 'campaign-' || cp, 'channel-' || ch, 100 + " + base + bump + ", 5,"
                + " 1, 1250, 106 + " + base + bump + " FROM generate_series(0, 1439) w, generate_series(0, "
                + (campaigns - 1) + ") cp, generate_series(0, 6) ch,"
                + " LATERAL (SELECT timestamptz '" + DAY + "' + w * interval '1 minute' AS ts) x"
                + " WHERE (w + cp + ch) % 50 <> " + base);
        s.execute("ANALYZE batch_window_metrics_staging");
        return staged;
    }

    private static long count(Statement s, String sql) throws Exception {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
