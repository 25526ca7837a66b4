package dev.recount.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;

/**
 * Batch reference: the recompute over one day of the lake with DuckDB, by both query texts of {@link WindowSql}
 * ({@code sql-rank}: every row ranked; {@code sql-candidates}: the plan the batch layer ships), alternating,
 * {@code rounds} times, reading the Parquet files with hive partitioning and pruning to the day's partition. Args:
 * lake date [rounds] [threads]. Prints {@code RESULT duckdb-<variant> <round> <lakeRows> <seconds>} per run.
 */
public final class DuckDbLakeQuery {
    public static void main(String[] args) throws Exception {
        String lake = args[0];
        LocalDate day = LocalDate.parse(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        int threads = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        long from = day.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        long to = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        String source = "(SELECT * FROM read_parquet('" + lake + "/**/*.parquet', hive_partitioning = true)"
                + " WHERE event_date = '" + day + "')";
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                Statement s = c.createStatement()) {
            s.execute("SET threads = " + threads);
            for (int round = 1; round <= rounds; round++) {
                for (String variant : List.of("sql-rank", "sql-candidates")) {
                    String query = variant.equals("sql-rank")
                            ? WindowSql.rankEveryRow(source, from, to, 60_000)
                            : WindowSql.candidatesOnly(source, from, to, 60_000, "hash");
                    long t0 = System.nanoTime();
                    long keys;
                    long events;
                    long lakeRows;
                    try (ResultSet rs =
                            s.executeQuery("SELECT count(*), sum(events), sum(lake_rows) FROM (" + query + ")")) {
                        rs.next();
                        keys = rs.getLong(1);
                        events = rs.getLong(2);
                        lakeRows = rs.getLong(3);
                    }
                    double seconds = (System.nanoTime() - t0) / 1e9;
                    System.out.printf(
                            Locale.ROOT,
                            "duckdb %s round %d: %d window keys, %d events, %d lake rows in %.2f s%n",
                            variant,
                            round,
                            keys,
                            events,
                            lakeRows,
                            seconds);
                    System.out.printf(Locale.ROOT, "RESULT duckdb-%s %d %d %.2f%n", variant, round, lakeRows, seconds);
                }
            }
        }
    }
}
