package dev.recount.batch;

import org.apache.spark.sql.SparkSession;

/** Where the SparkSession of a command comes from: the CLI makes and stops one; tests share one per JVM. */
public interface SparkSessions {
    /**
     * ANSI SQL mode: an arithmetic overflow (a BIGINT count, a DECIMAL(38,0) spend sum) or an invalid cast is an
     * error. Without it Spark wraps a BIGINT sum and turns an overflowing decimal sum into NULL, silently; a
     * wrong number that looks right could then be finalized by the reconciler. Every session recount runs
     * Spark SQL in sets it, whatever the command line or spark-defaults say ({@link WindowAggregation} refuses
     * a session without it).
     */
    String ANSI_MODE = "spark.sql.ansi.enabled";

    SparkSession open(BackfillSettings settings, String masterOverride);

    void release(SparkSession session);

    /**
     * A session for this process. The master is {@code --master} if given, else what spark-submit set (the
     * {@code spark.master} system property), else {@code batch.spark-master} from the config — so the same jar
     * runs locally and on a cluster.
     */
    SparkSessions OWNED = new SparkSessions() {
        @Override
        public SparkSession open(BackfillSettings settings, String masterOverride) {
            String submitted = System.getProperty("spark.master");
            String master = masterOverride != null ? masterOverride : submitted != null ? null : settings.sparkMaster();
            SparkSession.Builder b = SparkSession.builder().appName("recount-backfill");
            if (master != null) b.master(master);
            String effective = master != null ? master : submitted;
            // Window starts are epoch millis, never session-zone timestamps; UTC keeps any formatting in logs plain.
            b.config("spark.sql.session.timeZone", "UTC");
            // Local or submitted alike, and over any --conf or -D: exact results are not a tuning choice.
            b.config(ANSI_MODE, "true");
            if (effective.startsWith("local")) {
                // A laptop's non-loopback address may change or be firewalled; local mode needs none.
                b.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1");
                // The UI (bound to $SPARK_LOCAL_IP, 127.0.0.1 from ./recount) shows the run; it does not kill stages.
                defaultTo(b, "spark.ui.killEnabled", "false");
                // Spark's defaults (200 shuffle partitions, 128 MB splits) suit a cluster; on a few local cores,
                // fewer shuffle partitions and smaller splits balance better: about 20% faster on one day of
                // 10 million events with local[2]. -Dspark.* system properties still win.
                defaultTo(b, "spark.sql.shuffle.partitions", "16");
                defaultTo(b, "spark.sql.files.maxPartitionBytes", "32m");
            }
            return b.getOrCreate();
        }

        @Override
        public void release(SparkSession session) {
            session.stop();
        }

        private void defaultTo(SparkSession.Builder b, String key, String value) {
            if (System.getProperty(key) == null) b.config(key, value);
        }
    };
}
