package dev.recount.bench;

import dev.recount.core.metrics.Metric;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Locale;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * (b) What a user would write instead of the streaming job: the same 1-minute windowed metrics in Flink SQL — a Kafka
 * source table with a WATERMARK clause (same out-of-orderness and idleness as shipped), a TUMBLE window, and a JDBC
 * upsert sink (primary key) into a PostgreSQL table. Bounded at the latest offsets, parallelism 2, checkpoints as
 * shipped. No de-duplication, no dead-letter/late routing, no lake: those are what recount adds.
 *
 * <p>Args: topic schema [parallelism] [checkpointInterval]. Connection settings from local.env's variables.
 * Prints one line {@code RESULT flink-sql <records> <seconds>}.
 */
public final class FlinkSqlBench {
    public static void main(String[] args) throws Exception {
        String topic = args[0];
        String schema = args[1];
        int parallelism = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        String checkpoint = args.length > 3 ? args[3] : "10s";
        String outOfOrderness = args.length > 4 ? args[4] : "30";
        String bootstrap = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
        String url = System.getenv("RECOUNT_JDBC_URL");
        String user = System.getenv("PGUSER");
        String password = System.getenv().getOrDefault("PGPASSWORD", "");
        long records = Topics.records(bootstrap, topic);

        try (Connection c = DriverManager.getConnection(url, user, password); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            s.execute("DROP TABLE IF EXISTS " + schema + ".sql_window_metrics");
            s.execute("CREATE TABLE " + schema + ".sql_window_metrics (window_start timestamp NOT NULL, window_end timestamp NOT NULL,"
                    + " campaign_id text NOT NULL, channel_id text NOT NULL, impressions bigint, clicks bigint, conversions bigint,"
                    + " spend_micros numeric(38,0), events bigint, PRIMARY KEY (window_start, campaign_id, channel_id))");
        }

        Configuration conf = new Configuration();
        conf.setString("execution.checkpointing.interval", checkpoint);
        conf.setString("rest.port", "0");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        StreamTableEnvironment t = StreamTableEnvironment.create(env);
        t.getConfig().set("table.exec.source.idle-timeout", "1 min");
        t.executeSql("CREATE TABLE events (event_id STRING, event_type STRING, event_ts BIGINT, campaign_id STRING,"
                + " channel_id STRING, cost_micros BIGINT,"
                + " record_ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,"
                // Events whose event_ts is outside [record_ts - 7d, record_ts + 5m] are invalid (validation.max-past /
                // max-future); they must not move the watermark, so they get time 0 (always late, dropped by the window).
                + " rowtime AS CASE WHEN TO_TIMESTAMP_LTZ(event_ts, 3) BETWEEN record_ts - INTERVAL '7' DAY"
                + " AND record_ts + INTERVAL '5' MINUTE THEN TO_TIMESTAMP_LTZ(event_ts, 3) ELSE TO_TIMESTAMP_LTZ(0, 3) END,"
                + " WATERMARK FOR rowtime AS rowtime - INTERVAL '" + outOfOrderness + "' SECOND"
                + ") WITH ('connector' = 'kafka', 'topic' = '" + topic + "', 'properties.bootstrap.servers' = '" + bootstrap + "',"
                + " 'properties.group.id' = 'bench-flink-sql', 'scan.startup.mode' = 'earliest-offset',"
                + " 'scan.bounded.mode' = 'latest-offset', 'format' = 'json', 'json.ignore-parse-errors' = 'true',"
                + " 'json.fail-on-missing-field' = 'false')");
        t.executeSql("CREATE TABLE sink (window_start TIMESTAMP(3), window_end TIMESTAMP(3), campaign_id STRING,"
                + " channel_id STRING, impressions BIGINT, clicks BIGINT, conversions BIGINT, spend_micros "
                + Metric.SPEND_SQL_TYPE + ", events BIGINT,"
                + " PRIMARY KEY (window_start, campaign_id, channel_id) NOT ENFORCED"
                + ") WITH ('connector' = 'jdbc', 'url' = '" + url + "', 'table-name' = '" + schema + ".sql_window_metrics',"
                + " 'username' = '" + user + "', 'password' = '" + password + "')");
        // A minimal validity filter (required fields, known type, non-negative cost), roughly what EventValidator does.
        String insert = "INSERT INTO sink SELECT window_start, window_end, campaign_id, channel_id, " + WindowSql.metricSums()
                + " FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(rowtime), INTERVAL '1' MINUTE))"
                + " WHERE event_id IS NOT NULL AND event_ts IS NOT NULL AND campaign_id IS NOT NULL AND channel_id IS NOT NULL"
                + " AND cost_micros >= 0 AND event_type IN ('impression', 'click', 'conversion')"
                + " GROUP BY window_start, window_end, campaign_id, channel_id";
        long t0 = System.nanoTime();
        t.executeSql(insert).await();
        double seconds = (System.nanoTime() - t0) / 1e9;
        try (Connection c = DriverManager.getConnection(url, user, password); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*), coalesce(sum(events), 0) FROM " + schema + ".sql_window_metrics")) {
            rs.next();
            System.out.printf(Locale.ROOT, "flink-sql: %d rows, %d events counted%n", rs.getLong(1), rs.getLong(2));
        }
        System.out.printf(Locale.ROOT, "RESULT flink-sql %d %.2f%n", records, seconds);
        System.exit(0);
    }
}
