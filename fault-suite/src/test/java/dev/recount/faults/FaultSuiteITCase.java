package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.testkit.LocalStack;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The part of the fault suite that runs in every build: the whole stream JVM killed with kill -9 once while traffic
 * flows, a poison corpus, PostgreSQL stopped for 30 s, and a TaskManager and a Spark executor killed on the local
 * standalone clusters, each against the real pipeline (./recount migrate, stream, produce, backfill and reconcile as
 * their own processes) counting the suite's three metric sets, every output of every set judged against the oracle's
 * truth of the input topic. The whole matrix: fault-suite/run.sh. A round that fails keeps its directory, with the
 * stack's Flink and Spark logs copied into it, and prints the end of its logs.
 */
class FaultSuiteITCase {
    private final Stack stack = Stack.at(LocalStack.shared().home());

    @Test
    void aKillMinus9OfTheStreamLosesAndDoublesNothingInAnySet(@TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir)
            throws Exception {
        RoundResult round = new FaultRound(stack, dir, 4000, 400, 7, System.out::println).run(Fault.KILL_STREAM_ONCE);

        assertThat(round.injections()).isEqualTo(1);
        assertJudgedEverySet(round);
        assertThat(round.accounting().clean()).as(round.accounting().toString()).isTrue();
    }

    /**
     * Every record that once stopped or skewed the speed layer, mixed into normal traffic: the job never fails,
     * dead letters are exact by reason, every good event is counted once in every set (two quantities of 2^63 - 1 in
     * one window among them), and a producer clock 50 minutes ahead does not move the watermark ahead of the wall
     * clock.
     */
    @Test
    void aPoisonCorpusNeitherStopsNorSkewsTheJob(@TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir) throws Exception {
        RoundResult round = new FaultRound(stack, dir, 4000, 400, 9, System.out::println).run(Fault.POISON_CORPUS);

        assertThat(round.notes()).contains("failures of the running job during the corpus: 0");
        assertJudgedEverySet(round);
        assertThat(round.accounting().clean()).as(round.accounting().toString()).isTrue();
    }

    /**
     * The same jars users deploy, on real clusters of separate processes (`up --cluster`): the shaded -flink.jar
     * submitted to a standalone Flink cluster, one of whose two TaskManagers is killed with kill -9 while traffic
     * flows, later both at once (the job waits without slots until they are started again), then the JobManager
     * (`stream --cluster` must say that the job is gone and how it resumes; run again, it resumes); the Spark
     * application jar submitted to a standalone Spark cluster, whose executor is killed with kill -9 while it runs a
     * task of `backfill range`. Nothing lost or doubled in any set; every set's serving view equals its truth.
     */
    @Test
    void onStandaloneClustersKilledFlinkProcessesAndAnExecutorLoseAndDoubleNothing(
            @TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir) throws Exception {
        RoundResult round =
                new FaultRound(stack, dir, 4000, 400, 11, System.out::println).run(Fault.CLUSTER_PROCESSES_KILLED);

        assertThat(round.injections()).isEqualTo(3);
        assertThat(round.recoveries()).hasSize(3);
        assertThat(round.notes())
                .anyMatch(n -> n.startsWith("TaskManager 1 (pid"))
                .anyMatch(n -> n.startsWith("both TaskManagers (pids"))
                .anyMatch(n -> n.startsWith("`stream --cluster` exited 1 ")
                        && n.contains(": recount stream: lost the Flink JobManager while job "))
                .noneMatch(n -> n.equals("failovers of the job after the kill: 0"))
                .anyMatch(n -> n.startsWith("killed Spark executor"))
                .contains("cluster processes listening beyond 127.0.0.1: none");
        assertJudgedEverySet(round);
        assertThat(round.accounting().clean()).as(round.accounting().toString()).isTrue();
    }

    @Test
    void postgresStoppedFor30sLosesAndDoublesNothing(@TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir)
            throws Exception {
        RoundResult round = new FaultRound(stack, dir, 4000, 400, 8, System.out::println).run(Fault.POSTGRES_STOPPED);

        assertThat(round.recoveries()).hasSize(1);
        assertJudgedEverySet(round);
        assertThat(round.accounting().clean()).as(round.accounting().toString()).isTrue();
    }

    /** The round judged all three sets, after the drain and after reconcile, attribution where the set has it. */
    private static void assertJudgedEverySet(RoundResult round) {
        Accounting.Result a = round.accounting();
        assertThat(a.counts())
                .extracting(Accounting.SetCount::set)
                .containsExactly("default", "campaign_slot", "channel_country");
        assertThat(a.counts()).allMatch(c -> c.keys() > 0 && c.streamRows() > 0, "every set has keys and stream rows");
        assertThat(a.served())
                .extracting(Accounting.SetServed::set)
                .containsExactly("default", "campaign_slot", "channel_country");
        assertThat(a.served("channel_country").orElseThrow().attributionKeysWrong())
                .as("attribution judged")
                .isNotNegative();
        assertThat(a.backfill().records())
                .as("too-late events on the backfill topic")
                .isPositive();
    }
}
