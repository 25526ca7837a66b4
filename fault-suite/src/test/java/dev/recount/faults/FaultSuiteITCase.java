package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.testkit.LocalStack;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The part of the fault suite that runs in every build: the whole stream JVM killed with kill -9 once while traffic
 * flows, and PostgreSQL stopped for 30 s, each against the real pipeline (./recount stream and produce as their own
 * processes), every output checked against the ground truth. The whole matrix: fault-suite/run.sh.
 */
class FaultSuiteITCase {
    private final LocalStack stack = LocalStack.shared();

    @Test
    void aKillMinus9OfTheStreamLosesAndDoublesNothing(@TempDir Path dir) throws Exception {
        RoundResult round = new FaultRound(stack, dir, 4000, 400, 7, System.out::println).run(Fault.KILL_STREAM_ONCE);

        assertThat(round.injections()).isEqualTo(1);
        assertThat(round.accounting().clean()).as(round.accounting().toString()).isTrue();
    }

    @Test
    void postgresStoppedFor30sLosesAndDoublesNothing(@TempDir Path dir) throws Exception {
        RoundResult round = new FaultRound(stack, dir, 4000, 400, 8, System.out::println).run(Fault.POSTGRES_STOPPED);

        assertThat(round.recoveries()).hasSize(1);
        assertThat(round.accounting().clean()).as(round.accounting().toString()).isTrue();
    }
}
