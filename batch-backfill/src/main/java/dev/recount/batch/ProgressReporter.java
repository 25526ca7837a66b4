package dev.recount.batch;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkStageInfo;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.JavaSparkStatusTracker;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Periodic status lines for long runs: every interval, each active Spark stage with its completed and total
 * tasks. Cheap (reads the driver's status tracker) and independent of the Spark UI, which is often not
 * reachable on a cluster.
 */
final class ProgressReporter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProgressReporter.class);

    private final ScheduledExecutorService timer;

    private ProgressReporter(ScheduledExecutorService timer) {
        this.timer = timer;
    }

    static ProgressReporter start(SparkSession spark, String label, Duration interval) {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "recount-backfill-progress");
            t.setDaemon(true);
            return t;
        });
        JavaSparkStatusTracker tracker =
                JavaSparkContext.fromSparkContext(spark.sparkContext()).statusTracker();
        timer.scheduleAtFixedRate(
                () -> report(tracker, label), interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return new ProgressReporter(timer);
    }

    private static void report(JavaSparkStatusTracker tracker, String label) {
        try {
            for (int stageId : tracker.getActiveStageIds()) {
                SparkStageInfo s = tracker.getStageInfo(stageId);
                if (s == null) continue;
                int total = s.numTasks();
                int done = s.numCompletedTasks();
                LOG.info(
                        "{}: stage {} ({}) {}/{} tasks done ({}%), {} running",
                        label,
                        stageId,
                        shortName(s.name()),
                        done,
                        total,
                        total == 0 ? 0 : done * 100 / total,
                        s.numActiveTasks());
            }
        } catch (RuntimeException e) {
            LOG.debug("progress report failed", e);
        }
    }

    private static String shortName(String stageName) {
        int at = stageName.indexOf(" at ");
        return at > 0 ? stageName.substring(0, at) : stageName;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
