package dev.recount.db.sets;

import dev.recount.core.sets.Identifiers;
import dev.recount.core.sets.MetricSet;
import java.util.List;
import java.util.Objects;

/**
 * The names of one metric set's tables, views and functions: today's names for the {@link MetricSet#DEFAULT} set
 * (created by migrations V2-V26), {@code <set>__<name>} for every other set (created by {@code migrate} from the
 * definitions, {@link SetSchema}). Set names never hold {@code __}, so no two sets' names meet, and every name is a
 * strict identifier that needs no quoting.
 */
public final class SetTables {
    private final MetricSet set;
    private final String prefix;

    public SetTables(MetricSet set) {
        this.set = Objects.requireNonNull(set, "set");
        this.prefix = set.isDefault() ? "" : set.name() + Identifiers.SET_SEPARATOR;
    }

    public MetricSet set() {
        return set;
    }

    /** The set's object called {@code base} in the default set. */
    public String name(String base) {
        return prefix + base;
    }

    /** The stream job's rows (upserted by revision). */
    public String streamWindowMetrics() {
        return name("stream_window_metrics");
    }

    /** The batch layer's rows (replaced range by range). */
    public String batchWindowMetrics() {
        return name("batch_window_metrics");
    }

    /** Where Spark's JDBC writer loads a run's rows before they move into {@link #batchWindowMetrics()}. */
    public String batchWindowMetricsStaging() {
        return name("batch_window_metrics_staging");
    }

    /** The finalized values (partitioned by window_start). */
    public String windowCorrections() {
        return name("window_corrections");
    }

    /** The attached partitions of {@link #windowCorrections()} and their bounds. */
    public String windowCorrectionsPartitions() {
        return name("window_corrections_partitions");
    }

    /** The default partition of {@link #windowCorrections()}. */
    public String windowCorrectionsDefaultPartition() {
        return name("window_corrections_default");
    }

    /** One row per statement that wrote {@link #windowCorrections()} (a trigger's). */
    public String windowCorrectionsWrites() {
        return name("window_corrections_writes");
    }

    /**
     * The SECURITY DEFINER function that creates a partition of a first run from a batch run's rows (shorter for other
     * sets: a 24-character set name would take the default's name past 63 bytes).
     */
    public String windowCorrectionsNewPartitionOfBatch() {
        return set.isDefault() ? "window_corrections_new_partition_of_batch" : name("wc_new_partition_of_batch");
    }

    /**
     * How the partitions {@link #windowCorrectionsNewPartitionOfBatch()} creates are named, before their bounds: short
     * for other sets, so that {@code <set>__wc_<from>_<to>} fits PostgreSQL's 63 bytes.
     */
    public String windowCorrectionsPartitionPrefix() {
        return set.isDefault() ? "window_corrections_" : name("wc_");
    }

    /** The SECURITY DEFINER function that builds the two indexes of a partition before it is attached. */
    public String windowCorrectionsIndexPartition() {
        return name("window_corrections_index_partition");
    }

    /** The SECURITY DEFINER function that attaches an indexed partition to {@link #windowCorrections()}. */
    public String windowCorrectionsAttachPartition() {
        return name("window_corrections_attach_partition");
    }

    /** The SECURITY DEFINER function that moves a partition's rows into the default partition and drops it. */
    public String windowCorrectionsMergePartition() {
        return name("window_corrections_merge_partition");
    }

    /** The statement trigger's function (and the triggers' name) that appends to {@link #windowCorrectionsWrites()}. */
    public String windowCorrectionsWritten() {
        return name("window_corrections_written");
    }

    /**
     * The name of {@code table}'s index on {@code (<first dimension>, window_start)}: {@code <table>_campaign} as the
     * migrations named it for the default set, {@code <table>_by_dim} for other sets (whose first dimension may be
     * anything, and whose partitions' names leave 7 characters of PostgreSQL's 63 for it).
     */
    public String firstDimensionIndex(String table) {
        return table + firstDimensionIndexSuffix();
    }

    /** What {@link #firstDimensionIndex} appends to a table's name. */
    public String firstDimensionIndexSuffix() {
        return set.isDefault() ? "_campaign" : "_by_dim";
    }

    public String reconciliationDiffs() {
        return name("reconciliation_diffs");
    }

    /** The append-only audit log of served values a reconciliation changed. */
    public String correctionLog() {
        return name("correction_log");
    }

    /** The sequence of {@link #correctionLog()}'s {@code log_id}, which the reconciler draws from. */
    public String correctionLogSequence() {
        return name("correction_log_log_id_seq");
    }

    /** The trigger function that refuses UPDATE, DELETE and TRUNCATE on {@link #correctionLog()}. */
    public String correctionLogIsAppendOnly() {
        return name("correction_log_is_append_only");
    }

    /** Per window: the key counts and fingerprints the last applied reconciliation saw. */
    public String reconciledWindows() {
        return name("reconciled_windows");
    }

    /** The windows written since the last reconciliation (triggers on the stream and batch tables). */
    public String windowWrites() {
        return name("window_writes");
    }

    /** The row trigger function that logs writes of the stream and batch tables in {@link #windowWrites()}. */
    public String windowRowsWritten() {
        return name("window_rows_written");
    }

    /**
     * What succeeded, applied reconciliations of this set covered: the rollups' {@code is_final} needs it. The default
     * set's counts runs that reconciled it (metric_sets NULL or holding {@code default}), every other set's only runs
     * whose metric_sets hold its name.
     */
    public String reconciledRanges() {
        return name("reconciled_ranges");
    }

    /** The serving view finance reads. */
    public String windowMetrics() {
        return name("window_metrics");
    }

    public String periodMetricsRow() {
        return name("period_metrics_row");
    }

    public String periodMetrics() {
        return name("period_metrics");
    }

    public String hourlyMetrics() {
        return name("hourly_metrics");
    }

    public String dailyMetrics() {
        return name("daily_metrics");
    }

    public String slidingMetrics() {
        return name("sliding_metrics");
    }

    public String recentSlidingMetrics() {
        return name("recent_sliding_metrics");
    }

    public String streamAttributionMetrics() {
        return name("stream_attribution_metrics");
    }

    public String batchAttributionMetrics() {
        return name("batch_attribution_metrics");
    }

    public String batchAttributionMetricsStaging() {
        return name("batch_attribution_metrics_staging");
    }

    public String attributionDiffs() {
        return name("attribution_diffs");
    }

    public String attributionCorrections() {
        return name("attribution_corrections");
    }

    /** The serving view of attribution (finalized, else the stream's, else the batch's). */
    public String attributionMetrics() {
        return name("attribution_metrics");
    }

    /** {@code window_start, <dimensions>}: a row's key, in the primary key's order. */
    public String keyColumns() {
        return "window_start, " + dimensionColumns();
    }

    /** The dimensions' columns, comma separated. */
    public String dimensionColumns() {
        return String.join(", ", set.dimensionNames());
    }

    /** The measures' columns in the set's order, each with {@code prefix} ({@code "stream_"}, ...). */
    public String measureColumns(String prefix) {
        return String.join(
                ", ", set.measureNames().stream().map(m -> prefix + m).toList());
    }

    public String measureColumns() {
        return measureColumns("");
    }

    public List<String> dimensionNames() {
        return set.dimensionNames();
    }

    @Override
    public String toString() {
        return "SetTables{" + set.name() + '}';
    }
}
