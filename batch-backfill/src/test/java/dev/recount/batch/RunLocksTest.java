package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.LocalDate;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class RunLocksTest {
    private static final long DAY = LocalDate.parse("2026-11-28").toEpochDay();

    @Test
    void locksTheGlobalKeySharedThenEachDayInAscendingOrder() {
        List<RunLocks.LockRequest> plan = RunLocks.plan(DAY - 1, DAY + 1, null);
        assertThat(plan)
                .extracting(RunLocks.LockRequest::key, RunLocks.LockRequest::shared)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(RunLocks.GLOBAL_KEY, true),
                        org.assertj.core.groups.Tuple.tuple((int) DAY - 1, false),
                        org.assertj.core.groups.Tuple.tuple((int) DAY, false),
                        org.assertj.core.groups.Tuple.tuple((int) DAY + 1, false));
        assertThat(plan.get(2).what()).isEqualTo("UTC day 2026-11-28");
    }

    @Test
    void locksOnlyTheDaysOfScatteredWindows() {
        List<RunLocks.LockRequest> plan = RunLocks.plan(DAY - 30, DAY, new TreeSet<>(List.of(DAY, DAY - 30)));
        assertThat(plan)
                .extracting(RunLocks.LockRequest::key)
                .containsExactly(RunLocks.GLOBAL_KEY, (int) DAY - 30, (int) DAY);
    }

    @Test
    void aRunOverManyDaysTakesTheGlobalLockExclusively() {
        List<RunLocks.LockRequest> plan = RunLocks.plan(DAY - RunLocks.MAX_DAY_LOCKS, DAY, null);
        assertThat(plan)
                .containsExactly(
                        new RunLocks.LockRequest(RunLocks.GLOBAL_KEY, false, "every day (this run spans 32 days)"));
    }

    @Test
    void schemasDoNotShareLocks() {
        assertThat(RunLocks.namespace("recount")).isNotEqualTo(RunLocks.namespace("recount_test"));
        assertThat(RunLocks.namespace("recount")).isEqualTo(RunLocks.namespace("recount"));
    }
}
