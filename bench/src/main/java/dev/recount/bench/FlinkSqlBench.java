package dev.recount.bench;

import dev.recount.core.sets.Measure;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Locale;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * What a user would write instead of the streaming job: the same 1-minute windowed metrics in Flink SQL — a Kafka
 * source table with a WATERMARK clause (same out-of-orderness and idleness as shipped), a TUMBLE window TVF, and a
 * JDBC upsert sink (primary key) into a PostgreSQL table. Bounded at the latest offsets, parallelism 2, checkpoints
 * as shipped. Two variants:
 *
 * <ul>
 *   <li>{@code plain} — (b) of docs/benchmarks.md: a minimal validity filter, no de-duplication (it counts duplicate
 *       sends), no dead-letter/late routing, no lake.</li>
 *   <li>{@code dedup} — (b2), the best a user would write for the same answer: the validity rules expressible in SQL
 *       (required fields non-empty, known event type, cost in {@code [0, max-cost]}, event_ts within {@code
 *       [record_ts - 7 d, record_ts + 5 min]}), de-duplication by {@code event_id} with Flink's ROW_NUMBER
 *       keep-first-row pattern (the first copy seen wins, as in recount) and state TTL = the de-dup horizon
 *       (window + out-of-orderness + allowed lateness), and the tuning Flink's documentation recommends for
 *       aggregations: mini-batch ({@code table.exec.mini-batch.*}) and local-global aggregation
 *       ({@code table.optimizer.agg-phase-strategy = TWO_PHASE}). Still no dead letters, no late routing (late
 *       events are dropped by the window), no lake, no exactly-once sink (JDBC upserts are at-least-once).</li>
 * </ul>
 *
 * <p>Args: topic schema [parallelism] [checkpointInterval] [outOfOrdernessSeconds] [plain|dedup]. Connection
 * settings from local.env's variables. Prints {@code RESULT flink-sql[-dedup] <records> <seconds>}.
 */
public final class FlinkSqlBench {
    /** validation.max-cost-micros default. */
    private static final long MAX_COST_MICROS = 1_000_000_000_000L;
    /** dedup.horizon default: window 1 min + out-of-orderness 30 s + allowed lateness 2 min. */
    private static final String DEDUP_HORIZON = "210 s";

    public static void main(String[] args) throws Exception {
        String topic = args[0];
        String schema = args[1];
        int parallelism = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        String checkpoint = args.length > 3 ? args[3] : "10s";
        String outOfOrderness = args.length > 4 ? args[4] : "30";
        boolean dedup = args.length > 5 && args[5].equals("dedup");
        String name = dedup ? "flink-sql-dedup" : "flink-sql";
        String bootstrap = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
        String url = System.getenv("RECOUNT_JDBC_URL");
        String user = System.getenv("PGUSER");
        String password = System.getenv().getOrDefault("PGPASSWORD", "");
        long records = Topics.records(bootstrap, topic);

        try (Connection c = DriverManager.getConnection(url, user, password);
                Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            s.execute("DROP TABLE IF EXISTS " + schema + ".sql_window_metrics");
            s.execute(
                    "CREATE TABLE " + schema
                            + ".sql_window_metrics (window_start timestamp NOT NULL, window_end timestamp NOT NULL,"
                            + " campaign_id text NOT NULL, channel_id text NOT NULL, impressions bigint, clicks bigint, conversions bigint,"
                            + " spend_micros numeric(38,0), events bigint, PRIMARY KEY (window_start, campaign_id, channel_id))");
        }

        Configuration conf = new Configuration();
        conf.setString("execution.checkpointing.interval", checkpoint);
        // Checkpoints on the file system, as the shipped job keeps them: the de-dup state outgrows the JobManager's
        // in-memory checkpoint storage (5 MB) at once.
        java.nio.file.Path checkpoints = java.nio.file.Files.createTempDirectory("bench-" + name + "-checkpoints");
        conf.setString("execution.checkpointing.dir", checkpoints.toUri().toString());
        conf.setString("state.backend.type", "hashmap");
        conf.setString("rest.port", "0");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        StreamTableEnvironment t = StreamTableEnvironment.create(env);
        t.getConfig().set("table.exec.source.idle-timeout", "1 min");
        if (dedup) {
            // Flink's performance tuning guide for unbounded aggregations: buffer input in mini-batches, aggregate
            // locally before the shuffle, and bound keyed state with a TTL (here: the de-dup horizon).
            t.getConfig().set("table.exec.mini-batch.enabled", "true");
            t.getConfig().set("table.exec.mini-batch.allow-latency", "2 s");
            t.getConfig().set("table.exec.mini-batch.size", "5000");
            t.getConfig().set("table.optimizer.agg-phase-strategy", "TWO_PHASE");
            t.getConfig().set("table.exec.state.ttl", DEDUP_HORIZON);
        }
        t.executeSql("CREATE TABLE events (event_id STRING, event_type STRING, event_ts BIGINT, campaign_id STRING,"
                + " channel_id STRING, cost_micros BIGINT,"
                + " record_ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,"
                + (dedup ? " proctime AS PROCTIME()," : "")
                // Events whose event_ts is outside [record_ts - 7d, record_ts + 5m] are invalid (validation.max-past /
                // max-future); they must not move the watermark, so they get time 0 (always late, dropped by the
                // window).
                + " rowtime AS CASE WHEN TO_TIMESTAMP_LTZ(event_ts, 3) BETWEEN record_ts - INTERVAL '7' DAY"
                + " AND record_ts + INTERVAL '5' MINUTE THEN TO_TIMESTAMP_LTZ(event_ts, 3) ELSE TO_TIMESTAMP_LTZ(0, 3) END,"
                + " WATERMARK FOR rowtime AS rowtime - INTERVAL '" + outOfOrderness + "' SECOND"
                + ") WITH ('connector' = 'kafka', 'topic' = '" + topic + "', 'properties.bootstrap.servers' = '"
                + bootstrap + "',"
                + " 'properties.group.id' = 'bench-" + name + "', 'scan.startup.mode' = 'earliest-offset',"
                + " 'scan.bounded.mode' = 'latest-offset', 'format' = 'json', 'json.ignore-parse-errors' = 'true',"
                + " 'json.fail-on-missing-field' = 'false')");
        t.executeSql("CREATE TABLE sink (window_start TIMESTAMP(3), window_end TIMESTAMP(3), campaign_id STRING,"
                + " channel_id STRING, impressions BIGINT, clicks BIGINT, conversions BIGINT, spend_micros "
                + Measure.SUM_SQL_TYPE + ", events BIGINT,"
                + " PRIMARY KEY (window_start, campaign_id, channel_id) NOT ENFORCED"
                + ") WITH ('connector' = 'jdbc', 'url' = '" + url + "', 'table-name' = '" + schema
                + ".sql_window_metrics',"
                + " 'username' = '" + user + "', 'password' = '" + password + "')");
        String insert;
        // Without the id rule (no control characters) one id with a NUL fails every JDBC batch and the job never ends.
        String idsWithoutControls = " AND NOT REGEXP(event_id, '[\\x00-\\x1F\\x7F-\\x9F]')"
                + " AND NOT REGEXP(campaign_id, '[\\x00-\\x1F\\x7F-\\x9F]')"
                + " AND NOT REGEXP(channel_id, '[\\x00-\\x1F\\x7F-\\x9F]')";
        if (dedup) {
            t.executeSql(
                    "CREATE TEMPORARY VIEW valid_events AS SELECT * FROM events"
                            + " WHERE CHAR_LENGTH(TRIM(event_id)) > 0 AND CHAR_LENGTH(TRIM(campaign_id)) > 0"
                            + " AND CHAR_LENGTH(TRIM(channel_id)) > 0 AND event_ts IS NOT NULL"
                            + " AND event_type IN ('impression', 'click', 'conversion')"
                            + " AND cost_micros BETWEEN 0 AND " + MAX_COST_MICROS
                            + " AND CHAR_LENGTH(event_id) <= 256 AND CHAR_LENGTH(campaign_id) <= 256 AND CHAR_LENGTH(channel_id) <= 256"
                            + idsWithoutControls
                            + " AND TO_TIMESTAMP_LTZ(event_ts, 3) BETWEEN record_ts - INTERVAL '7' DAY AND record_ts + INTERVAL '5' MINUTE");
            // Flink's de-duplication pattern: keep the first row per event_id in processing order (an append-only
            // result that a window TVF can consume).
            t.executeSql("CREATE TEMPORARY VIEW unique_events AS SELECT event_id, event_type, event_ts, campaign_id,"
                    + " channel_id, cost_micros, rowtime FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id"
                    + " ORDER BY proctime ASC) AS copy_rank FROM valid_events) WHERE copy_rank = 1");
            insert = "INSERT INTO sink SELECT window_start, window_end, campaign_id, channel_id, "
                    + WindowSql.metricSums()
                    + " FROM TABLE(TUMBLE(TABLE unique_events, DESCRIPTOR(rowtime), INTERVAL '1' MINUTE))"
                    + " GROUP BY window_start, window_end, campaign_id, channel_id";
        } else {
            // A minimal validity filter (required fields, known type, non-negative cost, ids without controls).
            insert = "INSERT INTO sink SELECT window_start, window_end, campaign_id, channel_id, "
                    + WindowSql.metricSums()
                    + " FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(rowtime), INTERVAL '1' MINUTE))"
                    + " WHERE event_id IS NOT NULL AND event_ts IS NOT NULL AND campaign_id IS NOT NULL AND channel_id IS NOT NULL"
                    + " AND cost_micros >= 0 AND event_type IN ('impression', 'click', 'conversion')"
                    + idsWithoutControls
                    + " GROUP BY window_start, window_end, campaign_id, channel_id";
        }
        System.out.println(name + " plan:\n" + t.explainSql(insert));
        long t0 = System.nanoTime();
        t.executeSql(insert).await();
        double seconds = (System.nanoTime() - t0) / 1e9;
        try (Connection c = DriverManager.getConnection(url, user, password);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT count(*), coalesce(sum(events), 0) FROM " + schema + ".sql_window_metrics")) {
            rs.next();
            System.out.printf(Locale.ROOT, "%s: %d rows, %d events counted%n", name, rs.getLong(1), rs.getLong(2));
        }
        System.out.printf(Locale.ROOT, "RESULT %s %d %.2f%n", name, records, seconds);
        try (var files = java.nio.file.Files.walk(checkpoints)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        }
        System.exit(0);
    }
}
