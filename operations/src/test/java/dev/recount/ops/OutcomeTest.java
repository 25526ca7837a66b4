package dev.recount.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Every step outcome has its own exit code, and the mapping keeps the steps' meaning. */
class OutcomeTest {
    @Test
    void backfillCodes() {
        assertThat(Outcome.ofBackfill(0)).isEqualTo(ExitCodes.OK);
        assertThat(Outcome.ofBackfill(1)).isEqualTo(ExitCodes.BACKFILL_FAILED);
        assertThat(Outcome.ofBackfill(2)).isEqualTo(ExitCodes.USAGE);
        assertThat(Outcome.ofBackfill(3)).isEqualTo(ExitCodes.LAKE_INCOMPLETE);
        assertThat(Outcome.ofBackfill(4)).isEqualTo(ExitCodes.LOCK_TIMEOUT);
        assertThat(Outcome.ofBackfill(137)).isEqualTo(ExitCodes.BACKFILL_FAILED);
    }

    @Test
    void theWorseOfTwoCodesIsAFailureThenBeyondToleranceThenOk() {
        assertThat(Outcome.worse(ExitCodes.OK, ExitCodes.OK)).isEqualTo(ExitCodes.OK);
        assertThat(Outcome.worse(ExitCodes.OK, ExitCodes.BEYOND_TOLERANCE)).isEqualTo(ExitCodes.BEYOND_TOLERANCE);
        assertThat(Outcome.worse(ExitCodes.BEYOND_TOLERANCE, ExitCodes.OK)).isEqualTo(ExitCodes.BEYOND_TOLERANCE);
        assertThat(Outcome.worse(ExitCodes.BEYOND_TOLERANCE, ExitCodes.BACKFILL_FAILED))
                .isEqualTo(ExitCodes.BACKFILL_FAILED);
        assertThat(Outcome.worse(ExitCodes.RECONCILE_FAILED, ExitCodes.OK)).isEqualTo(ExitCodes.RECONCILE_FAILED);
        assertThat(Outcome.worse(ExitCodes.RECONCILE_FAILED, ExitCodes.LOCK_TIMEOUT))
                .isEqualTo(ExitCodes.RECONCILE_FAILED);
    }

    @Test
    void reconcileCodes() {
        assertThat(Outcome.ofReconcile(0)).isEqualTo(ExitCodes.OK);
        assertThat(Outcome.ofReconcile(1)).isEqualTo(ExitCodes.RECONCILE_FAILED);
        assertThat(Outcome.ofReconcile(2)).isEqualTo(ExitCodes.USAGE);
        assertThat(Outcome.ofReconcile(3)).isEqualTo(ExitCodes.BEYOND_TOLERANCE);
        assertThat(Outcome.ofReconcile(4)).isEqualTo(ExitCodes.RECONCILE_REFUSED);
    }

    @Test
    void theCodesAreDistinct() throws IllegalAccessException {
        Set<Integer> seen = new HashSet<>();
        for (var f : ExitCodes.class.getFields()) {
            assertThat(seen.add(f.getInt(null))).as(f.getName()).isTrue();
        }
        assertThat(seen).hasSize(11);
    }

    @Test
    void foldingDays() {
        Outcome o = new Outcome();
        assertThat(o.finished()).isEqualTo(ExitCodes.OK);
        o.compacted(1);
        assertThat(o.finished()).isEqualTo(ExitCodes.COMPACTION_FAILED);
        assertThat(o.reconciled(ExitCodes.BEYOND_TOLERANCE)).isFalse();
        assertThat(o.reconciled(ExitCodes.OK)).isFalse();
        assertThat(o.finished()).isEqualTo(ExitCodes.BEYOND_TOLERANCE);
        assertThat(o.reconciled(ExitCodes.RECONCILE_FAILED)).isTrue();
    }

    @Test
    void correctLockKeysDifferPerSchema() {
        assertThat(CorrectLock.key("a")).isNotEqualTo(CorrectLock.key("b"));
        assertThat(CorrectLock.key("a")).isEqualTo(CorrectLock.key("a"));
    }
}
