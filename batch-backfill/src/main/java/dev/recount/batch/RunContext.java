package dev.recount.batch;

import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.sets.SetTables;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.spark.sql.SparkSession;

/**
 * What every backfill run works with: Spark, the database, the settings, the metric sets it computes ({@code sets}:
 * every declared one, or the one of {@code --set NAME}), and where it stages its rows.
 */
record RunContext(
        SparkSession spark,
        DataSource db,
        BackfillSettings settings,
        MetricSets sets,
        StagingWriter staging,
        Supplier<Consumer<byte[], byte[]>> consumers,
        Duration progressInterval) {

    /** The sets this run computes, in the definitions' order. */
    List<MetricSet> computed() {
        return sets.sets();
    }

    /** Their names, as {@code batch_runs.metric_sets} records them. */
    List<String> names() {
        return sets.sets().stream().map(MetricSet::name).toList();
    }

    /** The tables of every declared set (not only those computed: an abandoned run may have staged any). */
    List<SetTables> declaredTables() {
        return settings.sets().sets().stream().map(SetTables::new).toList();
    }

    void describeJobs(long runId, String what) {
        spark.sparkContext()
                .setJobGroup("recount-backfill-run-" + runId, "recount backfill run " + runId + ": " + what, false);
    }
}
