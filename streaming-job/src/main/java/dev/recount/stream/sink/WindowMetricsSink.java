package dev.recount.stream.sink;

import dev.recount.core.sets.MetricSets;
import java.util.Collection;
import java.util.Objects;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The exactly-once-effective PostgreSQL sink for every metric set's {@code stream_window_metrics} (db's
 * {@code StreamWindowMetricsTable} of the set: today's table for the default set, {@code <set>__stream_window_metrics}
 * for the others) and {@code stream_progress}: a two-phase Sink V2. The writer collects rows per checkpoint ({@link WindowMetricsWriter}); the committer writes
 * them once the checkpoint is complete ({@link WindowMetricsCommitter}). PostgreSQL therefore only ever holds
 * results of completed checkpoints, and the replay after a failure starts from exactly that state.
 */
public final class WindowMetricsSink
        implements Sink<SetWindowRow>,
                SupportsCommitter<WindowMetricsCommittable>,
                SupportsWriterState<SetWindowRow, ProgressMark> {
    private static final long serialVersionUID = 1L;

    private final PostgresTarget target;
    private final String jobName;
    private final String lineage;
    private final RejectedRows.Publication rejectedRows;
    private final MetricSets sets;

    /**
     * @param jobName      the stream_progress row this job advances
     * @param lineage      the chain of runs this run continues, recorded with every commit (see RestoreGuard)
     * @param rejectedRows where dead letters of rows PostgreSQL refuses go ({@link KafkaOutputs#rejectedRows}); null
     *                     records them in stream_rejected_rows only
     * @param sets         the sets whose tables rows go to (rows of a set no longer defined are not committed)
     */
    public WindowMetricsSink(
            PostgresTarget target,
            String jobName,
            String lineage,
            RejectedRows.Publication rejectedRows,
            MetricSets sets) {
        this.sets = Objects.requireNonNull(sets, "sets");
        this.target = Objects.requireNonNull(target, "target");
        this.jobName = Objects.requireNonNull(jobName, "jobName");
        this.lineage = Objects.requireNonNull(lineage, "lineage");
        this.rejectedRows = rejectedRows;
    }

    @Override
    public StatefulSinkWriter<SetWindowRow, ProgressMark> createWriter(WriterInitContext context) {
        return new WindowMetricsWriter(context.metricGroup(), null);
    }

    @Override
    public StatefulSinkWriter<SetWindowRow, ProgressMark> restoreWriter(
            WriterInitContext context, Collection<ProgressMark> recoveredState) {
        ProgressMark latest = null;
        for (ProgressMark m : recoveredState) latest = ProgressMark.later(latest, m);
        return new WindowMetricsWriter(context.metricGroup(), latest);
    }

    @Override
    public SimpleVersionedSerializer<ProgressMark> getWriterStateSerializer() {
        return new ProgressMark.Serializer();
    }

    @Override
    public Committer<WindowMetricsCommittable> createCommitter(CommitterInitContext context) {
        return new WindowMetricsCommitter(
                target,
                sets,
                jobName,
                lineage,
                new RejectedRows(rejectedRows, context.getTaskInfo().getIndexOfThisSubtask()),
                context.metricGroup());
    }

    @Override
    public SimpleVersionedSerializer<WindowMetricsCommittable> getCommittableSerializer() {
        return new WindowMetricsCommittable.Serializer();
    }
}
