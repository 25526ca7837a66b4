package dev.recount.stream.run;

import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.kafka.common.TopicPartition;

/**
 * How a new run starts, decided by {@link RunLedger#plan}.
 *
 * @param fromJob          the run this one follows (null when FRESH)
 * @param snapshot         the checkpoint or savepoint to restore ({@code _metadata}'s directory), or null
 * @param startOffsets     where the input starts when nothing is restored (empty: earliest)
 * @param closedUntil      windows ending at or before this are final (Long.MIN_VALUE: none)
 * @param carriedStopOffsets when resuming an interrupted --bounded run: its stopping offsets, which it keeps
 * @param olderSnapshots  RESTORE: the run's other complete snapshots, newest first (see RestoreGuard)
 * @param lineage         the chain of runs the new run continues (RESTORE: the restored run's; else a new one)
 */
public record ResumePlan(
        Kind kind,
        JobID fromJob,
        String snapshot,
        Map<TopicPartition, Long> startOffsets,
        long closedUntil,
        Map<TopicPartition, Long> carriedStopOffsets,
        List<String> olderSnapshots,
        String lineage) {

    public enum Kind {
        /** No usable run: read the input from the earliest offset. */
        FRESH,
        /** Restore the latest checkpoint or savepoint of the previous run. */
        RESTORE,
        /** The previous run was a finished --bounded one: go on from its stopping offsets with fresh state. */
        CONTINUE_AFTER_BOUNDED,
        /**
         * stream.restore=cluster: whatever the cluster passes (execution.state-recovery.path), else the earliest
         * offsets; the job looks at no checkpoint itself.
         */
        CLUSTER_DECIDES
    }

    public ResumePlan {
        startOffsets = Map.copyOf(startOffsets);
        carriedStopOffsets = carriedStopOffsets == null ? null : Map.copyOf(carriedStopOffsets);
        olderSnapshots = olderSnapshots == null ? List.of() : List.copyOf(olderSnapshots);
        java.util.Objects.requireNonNull(lineage, "lineage");
    }

    public static ResumePlan fresh() {
        return new ResumePlan(Kind.FRESH, null, null, Map.of(), Long.MIN_VALUE, null, List.of(), newLineage());
    }

    public static ResumePlan clusterDecides() {
        return new ResumePlan(
                Kind.CLUSTER_DECIDES, null, null, Map.of(), Long.MIN_VALUE, null, List.of(), newLineage());
    }

    /** The same plan, restoring {@code other} (one of {@link #olderSnapshots}) instead. */
    public ResumePlan restoring(String other) {
        return new ResumePlan(
                kind,
                fromJob,
                other,
                startOffsets,
                closedUntil,
                carriedStopOffsets,
                olderSnapshots.subList(olderSnapshots.indexOf(other) + 1, olderSnapshots.size()),
                lineage);
    }

    static String newLineage() {
        return java.util.UUID.randomUUID().toString();
    }

    public String describe() {
        return switch (kind) {
            case FRESH -> "starting from the earliest input offsets";
            case RESTORE -> "resuming from " + snapshot;
            case CLUSTER_DECIDES ->
                "stream.restore=cluster: resuming from the savepoint or checkpoint the cluster passes"
                        + " (execution.state-recovery.path), if any; else from the earliest input offsets";
            case CONTINUE_AFTER_BOUNDED ->
                "continuing after a finished --bounded run at its end offsets"
                        + (closedUntil == Long.MIN_VALUE
                                ? ""
                                : " (windows ending by " + java.time.Instant.ofEpochMilli(closedUntil) + " are final)");
        };
    }
}
