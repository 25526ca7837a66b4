package dev.recount.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.cli.ExitCode;
import org.junit.jupiter.api.Test;

/** The steps' codes read as the command's (one table), and the days' outcomes fold into one. */
class OutcomeTest {
    @Test
    void backfillCodes() {
        assertThat(Outcome.ofBackfill(0)).isEqualTo(ExitCode.OK.code());
        assertThat(Outcome.ofBackfill(1)).isEqualTo(ExitCode.FAILED.code());
        assertThat(Outcome.ofBackfill(2)).isEqualTo(ExitCode.USAGE.code());
        assertThat(Outcome.ofBackfill(4)).isEqualTo(ExitCode.REFUSED.code());
        assertThat(Outcome.ofBackfill(5)).isEqualTo(ExitCode.BUSY.code());
        // No backfill exits "beyond tolerance": a code it does not have is a failure.
        assertThat(Outcome.ofBackfill(3)).isEqualTo(ExitCode.FAILED.code());
        assertThat(Outcome.ofBackfill(137)).isEqualTo(ExitCode.FAILED.code());
    }

    @Test
    void theWorseOfTwoCodesIsAFailureThenBeyondToleranceThenOk() {
        assertThat(Outcome.worse(ExitCode.OK.code(), ExitCode.OK.code())).isEqualTo(ExitCode.OK.code());
        assertThat(Outcome.worse(ExitCode.OK.code(), ExitCode.BEYOND_TOLERANCE.code()))
                .isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(Outcome.worse(ExitCode.BEYOND_TOLERANCE.code(), ExitCode.OK.code()))
                .isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(Outcome.worse(ExitCode.BEYOND_TOLERANCE.code(), ExitCode.FAILED.code()))
                .isEqualTo(ExitCode.FAILED.code());
        assertThat(Outcome.worse(ExitCode.FAILED.code(), ExitCode.OK.code())).isEqualTo(ExitCode.FAILED.code());
        assertThat(Outcome.worse(ExitCode.FAILED.code(), ExitCode.BUSY.code())).isEqualTo(ExitCode.FAILED.code());
    }

    @Test
    void reconcileCodes() {
        assertThat(Outcome.ofReconcile(0)).isEqualTo(ExitCode.OK.code());
        assertThat(Outcome.ofReconcile(1)).isEqualTo(ExitCode.FAILED.code());
        assertThat(Outcome.ofReconcile(2)).isEqualTo(ExitCode.USAGE.code());
        assertThat(Outcome.ofReconcile(3)).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(Outcome.ofReconcile(4)).isEqualTo(ExitCode.REFUSED.code());
    }

    @Test
    void foldingDays() {
        Outcome o = new Outcome();
        assertThat(o.finished()).isEqualTo(ExitCode.OK.code());
        o.compacted(1);
        assertThat(o.finished()).isEqualTo(ExitCode.PARTLY.code());
        assertThat(o.reconciled(ExitCode.BEYOND_TOLERANCE.code())).isFalse();
        assertThat(o.reconciled(ExitCode.OK.code())).isFalse();
        assertThat(o.finished()).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(o.reconciled(ExitCode.FAILED.code())).isTrue();
    }

    @Test
    void correctLockKeysDifferPerSchema() {
        assertThat(CorrectLock.key("a")).isNotEqualTo(CorrectLock.key("b"));
        assertThat(CorrectLock.key("a")).isEqualTo(CorrectLock.key("a"));
    }
}
