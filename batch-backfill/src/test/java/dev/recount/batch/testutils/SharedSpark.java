package dev.recount.batch.testutils;

import dev.recount.batch.BackfillSettings;
import dev.recount.batch.SparkSessions;
import org.apache.spark.sql.SparkSession;

/** One local SparkSession per test JVM (starting one costs seconds); Spark's shutdown hook stops it. */
public final class SharedSpark {
    private static SparkSession session;

    /** Hands the shared session to the CLI and never stops it. */
    public static final SparkSessions PROVIDER = new SparkSessions() {
        @Override
        public SparkSession open(BackfillSettings settings, String masterOverride) {
            return session();
        }

        @Override
        public void release(SparkSession s) {
            // shared by every test of this JVM
        }
    };

    private SharedSpark() {}

    public static synchronized SparkSession session() {
        if (session == null) {
            session = SparkSession.builder()
                    .master("local[2]")
                    .appName("recount-batch-tests")
                    .config("spark.ui.enabled", "false")
                    .config("spark.sql.shuffle.partitions", "4")
                    .config("spark.driver.host", "127.0.0.1")
                    .config("spark.driver.bindAddress", "127.0.0.1")
                    .config("spark.sql.session.timeZone", "UTC")
                    .config(SparkSessions.ANSI_MODE, "true")
                    .getOrCreate();
        }
        return session;
    }
}
