package dev.recount.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Locale;

/**
 * Batch reference: the recompute query (WindowSql.batchRecompute) over one day of the lake with DuckDB, reading the
 * Parquet files with hive partitioning and pruning to the day's partition. Args: lake date [runs] [threads].
 * Prints {@code RESULT duckdb <lakeRows> <seconds>} per run.
 */
public final class DuckDbLakeQuery {
    public static void main(String[] args) throws Exception {
        String lake = args[0];
        LocalDate day = LocalDate.parse(args[1]);
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int threads = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        long from = day.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        long to = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        String source = "(SELECT * FROM read_parquet('" + lake + "/**/*.parquet', hive_partitioning = true)"
                + " WHERE event_date = '" + day + "')";
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("SET threads = " + threads);
            for (int run = 1; run <= runs; run++) {
                long t0 = System.nanoTime();
                long keys = 0, events = 0, lakeRows = 0;
                try (ResultSet rs = s.executeQuery("SELECT count(*), sum(events), sum(lake_rows) FROM ("
                        + WindowSql.batchRecompute(source, from, to, 60_000) + ")")) {
                    rs.next();
                    keys = rs.getLong(1);
                    events = rs.getLong(2);
                    lakeRows = rs.getLong(3);
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf(Locale.ROOT, "duckdb run %d: %d window keys, %d events, %d lake rows in %.2f s%n",
                        run, keys, events, lakeRows, seconds);
                System.out.printf(Locale.ROOT, "RESULT duckdb %d %.2f%n", lakeRows, seconds);
            }
        }
    }
}
