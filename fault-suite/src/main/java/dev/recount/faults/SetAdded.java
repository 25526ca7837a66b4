package dev.recount.faults;

import dev.recount.oracle.Key;
import dev.recount.oracle.SetTruth;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;

/**
 * A metric set added to a running deployment, as a user adds one: the stream stopped with a savepoint (SIGTERM), the
 * set declared in the metric-sets file, `migrate` (its tables), the stream started again — it resumes from the
 * savepoint and counts the new set from its first window after everything it had read — then `backfill range --set`
 * computes the set's history from the lake and `reconcile --set` serves it. The round starts without {@link
 * SuiteSets#ADDED}.
 */
final class SetAdded {
    private SetAdded() {}

    /**
     * Once the first half of the traffic is sent and committed: stop, declare the set, migrate, start again, send the
     * second half. The recovery counts from the stop to the restarted job's first commit.
     */
    static int add(Pipeline pipeline, Traffic traffic, Observations seen) throws Exception {
        Instant since = Instant.now();
        traffic.awaitSent();
        pipeline.awaitCommitAfter(since, since, Duration.ofMinutes(2));
        Instant stopped = Instant.now();
        pipeline.stopStream();
        seen.notes.add("stream stopped (SIGTERM) after the first half of the traffic: "
                + Logs.lastMatching(pipeline.streamLog(), "(?i)savepoint"));
        pipeline.writeMetricSets(SuiteSets.yaml());
        pipeline.migrate();
        seen.notes.add(SuiteSets.ADDED + " declared; " + Logs.lastMatching(pipeline.log("migrate"), "metric sets"));
        Instant restarted = Instant.now();
        pipeline.startStream();
        pipeline.awaitRunning();
        traffic.sendNextPart();
        seen.recoveries.add(pipeline.awaitCommitAfter(restarted, stopped, Duration.ofMinutes(3)));
        return 1;
    }

    /**
     * The first window the stream counted the added set in: that of its earliest stream row. The set's stream
     * accounting holds from there; before it, the set's windows are the batch layer's alone, and no event of them
     * may be on the backfill topic for the set. Long.MAX_VALUE (nothing to account) when the stream wrote no row of
     * the set: a problem.
     */
    static long countedFrom(Outputs.AfterDrain out, Accounting.Backfill backfill, SetTruth truth, Observations seen) {
        SortedMap<Key, List<BigInteger>> rows = out.streamRows().get(SuiteSets.ADDED);
        if (rows == null || rows.isEmpty()) {
            seen.problems.add("the stream wrote no row of " + SuiteSets.ADDED + " after it was added");
            return Long.MAX_VALUE;
        }
        long from = rows.firstKey().windowStart();
        seen.notes.add(SuiteSets.ADDED + " counted by the stream from " + Instant.ofEpochMilli(from));
        long firstWindow = truth.rows().firstKey().windowStart();
        if (from <= firstWindow) {
            seen.problems.add(SuiteSets.ADDED + " has stream rows from the traffic's first window ("
                    + Instant.ofEpochMilli(firstWindow) + "), although it was added half way through");
        }
        SortedMap<Key, List<BigInteger>> late =
                backfill.counted().getOrDefault(SuiteSets.ADDED, Collections.emptySortedMap());
        long before = late.keySet().stream().filter(k -> k.windowStart() < from).count();
        if (before > 0) {
            seen.problems.add(before + " key(s) of " + SuiteSets.ADDED + " before " + Instant.ofEpochMilli(from)
                    + " on the backfill topic: windows from before the set was added are the batch layer's");
        }
        return from;
    }

    /**
     * `backfill range --set` and `reconcile --set` of the added set over the whole range: its serving views must then
     * equal its truth, history included.
     */
    static void backfillHistory(Pipeline pipeline, OutputReader reader, Sent sent, Range range, Observations seen)
            throws Exception {
        int backfilled = pipeline.backfillRange(range.from(), range.to(), "--set", SuiteSets.ADDED);
        if (backfilled != 0) {
            throw new IllegalStateException("backfill range --set " + SuiteSets.ADDED + " exited " + backfilled
                    + "; see " + pipeline.log("backfill"));
        }
        int reconciled = pipeline.reconcile(range.from(), range.to(), "--set", SuiteSets.ADDED);
        if (reconciled != 0 && reconciled != 3) {
            throw new IllegalStateException("reconcile --set " + SuiteSets.ADDED + " exited " + reconciled + "; see "
                    + pipeline.log("reconcile"));
        }
        Accounting.SetServed added = Accounting.served(sent, reader.served(sent)).stream()
                .filter(s -> s.set().equals(SuiteSets.ADDED))
                .findFirst()
                .orElseThrow();
        seen.notes.add("after `backfill range --set " + SuiteSets.ADDED + "` and `reconcile --set " + SuiteSets.ADDED
                + "` over " + range + ": " + added.keysWrong() + " of " + added.keys() + " keys wrong, attribution "
                + added.attributionKeysWrong() + " wrong");
        if (!added.clean()) {
            seen.problems.add(SuiteSets.ADDED + " not exact after its history was backfilled: "
                    + String.join("; ", added.examples()));
        }
    }
}
