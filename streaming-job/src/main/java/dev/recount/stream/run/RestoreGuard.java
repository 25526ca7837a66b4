package dev.recount.stream.run;

import dev.recount.db.tables.StreamProgressTable.Committed;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;

/**
 * Refuses the starts that would silently count events twice (or lose them), before anything is submitted.
 *
 * <p>What PostgreSQL already holds is the judge ({@link Committed}: the checkpoint of the last committed progress
 * mark, per lineage). A commit carries the mark of the checkpoint before it, so a committed mark {@code m} means
 * the outputs of a checkpoint after {@code m} are visible. Resuming from a snapshot at or before {@code m} would
 * replay events whose results are committed already: refused. That catches a newest checkpoint that was deleted,
 * and decides when an unreadable newest one may be skipped for an older one (only if nothing after the older one
 * was committed). A start from nothing while PostgreSQL holds results of earlier runs is refused too, unless asked
 * for with --from-earliest: re-reading the input from the beginning would count it all again.
 */
final class RestoreGuard {
    /** Reads the checkpoint id of a snapshot, failing if its metadata cannot be read. */
    @FunctionalInterface
    interface SnapshotReader {
        long checkpointId(String snapshotPath) throws IOException;
    }

    private RestoreGuard() {}

    /**
     * @return the plan to run: {@code plan} itself, or the same restore from an older snapshot
     * @throws IllegalStateException with a one-line reason and what to do
     */
    static ResumePlan check(
            ResumePlan plan,
            Optional<Committed> committed,
            boolean fromEarliest,
            SnapshotReader reader,
            Consumer<String> log) {
        switch (plan.kind()) {
            case FRESH -> {
                if (committed.isPresent() && !fromEarliest) {
                    throw new IllegalStateException(
                            "PostgreSQL already holds results of an earlier run (committed up to "
                                    + "checkpoint " + committed.get().checkpointId()
                                    + "), but there is no checkpoint to resume "
                                    + "from: point stream.checkpoint-dir at that run's checkpoints, or start over deliberately "
                                    + "with --from-earliest (events are then counted again until reconciled)");
                }
                return plan;
            }
            case RESTORE -> {
                return chooseSnapshot(plan, committed, reader, log);
            }
            default -> {
                return plan;
            }
        }
    }

    private static ResumePlan chooseSnapshot(
            ResumePlan plan, Optional<Committed> committed, SnapshotReader reader, Consumer<String> log) {
        List<String> unreadable = new ArrayList<>();
        List<String> candidates = new ArrayList<>();
        candidates.add(plan.snapshot());
        candidates.addAll(plan.olderSnapshots());
        for (String snapshot : candidates) {
            long id;
            try {
                id = reader.checkpointId(snapshot);
            } catch (IOException | RuntimeException e) {
                unreadable.add(snapshot + " (" + oneLine(e) + ")");
                continue;
            }
            if (committed.isPresent()
                    && plan.lineage().equals(committed.get().lineage())
                    && id <= committed.get().checkpointId()) {
                throw new IllegalStateException((unreadable.isEmpty()
                                ? ""
                                : "the newest snapshot is unreadable: " + String.join("; ", unreadable) + "; ")
                        + "snapshot " + snapshot + " (checkpoint " + id
                        + ") is older than results already committed to PostgreSQL (after checkpoint "
                        + committed.get().checkpointId() + "): resuming from it would count events twice. Restore the "
                        + "newer checkpoint, or start over deliberately with --from-earliest (then reconcile)");
            }
            if (!unreadable.isEmpty()) {
                log.accept("skipping unreadable snapshot " + String.join("; ", unreadable)
                        + ": none of its results were committed, so the older one is safe");
            }
            return snapshot.equals(plan.snapshot()) ? plan : plan.restoring(snapshot);
        }
        throw new IllegalStateException("no readable snapshot to resume from: " + String.join("; ", unreadable)
                + ". Restore the files, or start over deliberately with --from-earliest (then reconcile)");
    }

    /** Flink's own reader of a snapshot's {@code _metadata}: what a restore would read first. */
    static long readCheckpointId(String snapshotPath) throws IOException {
        Path metadata = new Path(snapshotPath, "_metadata");
        try (FSDataInputStream in = metadata.getFileSystem().open(metadata);
                DataInputStream data = new DataInputStream(in)) {
            CheckpointMetadata m =
                    Checkpoints.loadCheckpointMetadata(data, RestoreGuard.class.getClassLoader(), snapshotPath);
            return m.getCheckpointId();
        }
    }

    private static String oneLine(Throwable e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return m.replaceAll("\\s*\\R\\s*", " ").strip();
    }
}
