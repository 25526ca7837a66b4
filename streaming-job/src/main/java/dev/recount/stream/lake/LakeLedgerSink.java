package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.stream.sink.PostgresTarget;
import java.util.Objects;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Counts, per lake hour, the events handed to the lake writer, and records the counts in {@code lake_archived_rows}
 * once their checkpoint completes — the checkpoint that commits the lake files holding those events. It reads the
 * same stream as the lake sink, chained beside it, so each checkpoint's counts are exactly that checkpoint's files'
 * rows. The batch layer checks the lake against these sums before it recomputes from it: a lake hour holding fewer
 * rows than were archived into it lost files, and its windows are not recomputed from what is left.
 *
 * <p>A two-phase Sink V2 like the window-metrics sink: the writer's counts of a checkpoint become one committable
 * with an id drawn for it; the committer inserts them keyed by that id, so committing it again after a restart
 * inserts nothing, and counts of a checkpoint that never completed are never written (the replay counts its events
 * again, and its files are rewritten).
 */
public final class LakeLedgerSink implements Sink<AdEvent>, SupportsCommitter<LakeLedgerCommittable> {
    private static final long serialVersionUID = 1L;

    private final PostgresTarget target;

    public LakeLedgerSink(PostgresTarget target) {
        this.target = Objects.requireNonNull(target, "target");
    }

    @Override
    public SinkWriter<AdEvent> createWriter(WriterInitContext context) {
        return new LakeLedgerWriter();
    }

    @Override
    public Committer<LakeLedgerCommittable> createCommitter(CommitterInitContext context) {
        return new LakeLedgerCommitter(target, context.metricGroup());
    }

    @Override
    public SimpleVersionedSerializer<LakeLedgerCommittable> getCommittableSerializer() {
        return new LakeLedgerCommittable.Serializer();
    }
}
