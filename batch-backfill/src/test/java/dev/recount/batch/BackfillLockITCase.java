package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.core.cli.ExitCode;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.testkit.Poll;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No two backfills over overlapping ranges write at once. The "other run" is this test's own connection holding
 * the advisory lock of UTC day 2026-11-28, exactly as a running backfill over that day holds it.
 */
class BackfillLockITCase {
    private static final long DAY = LocalDate.parse("2026-11-28").toEpochDay();
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();

    @TempDir
    Path dir;

    BatchStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        t.lakeCompleteUntil(Instant.parse("2026-11-29T00:00:00Z"));
        t.lake.write(List.of(
                LakeEvent.of("e1", "click", W, "c1", "ch1", 5, 1),
                LakeEvent.of("e0", "click", W - 86_400_000, "c1", "ch1", 5, 0)));
    }

    @Test
    void anOverlappingRunWaitsUpToTheLockTimeoutThenFailsClearly() throws Exception {
        try (Connection otherRun = t.admin()) {
            lockDay(otherRun);
            long started = System.nanoTime();

            assertThat(t.backfill("range", "--from", "2026-11-28T09:00:00Z", "--to", "2026-11-28T11:00:00Z"))
                    .isEqualTo(ExitCode.BUSY.code());

            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
            assertThat(t.lastErr.strip())
                    .isEqualTo("recount backfill range: busy: another backfill holds an overlapping range"
                            + " (UTC day 2026-11-28); gave up after 2s (batch.lock-timeout)");
            assertThat(t.lastRun().status()).isEqualTo(BatchRunsTable.Status.FAILED);
            assertThat(t.batchRows()).isEmpty();

            // A range on another day does not overlap and is not held up.
            assertThat(t.backfill("range", "--from", "2026-11-27T10:00:00Z", "--to", "2026-11-27T10:01:00Z"))
                    .as(t.lastErr)
                    .isZero();
        }
    }

    @Test
    void aWaitingRunProceedsOnceTheOverlappingOneFinishes() throws Exception {
        t.set("batch.lock-timeout", "2m");
        try (Connection otherRun = t.admin()) {
            lockDay(otherRun);
            CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(
                    () -> t.backfill("range", "--from", "2026-11-28T10:00:00Z", "--to", "2026-11-28T10:01:00Z"));

            Poll.until(Duration.ofSeconds(60), "the backfill to queue for the day's lock", () -> waitsForDay(otherRun));
            assertThat(waiting).isNotDone();
            assertThat(t.batchRows()).isEmpty();

            unlockDay(otherRun);
            assertThat(waiting.get(60, TimeUnit.SECONDS)).as(t.lastErr).isZero();
        }
        assertThat(t.batchRows()).hasSize(1);
        assertThat(t.lastRun().status()).isEqualTo(BatchRunsTable.Status.SUCCEEDED);
    }

    private void lockDay(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_lock(?, ?)")) {
            ps.setInt(1, RunLocks.namespace(t.schema));
            ps.setInt(2, RunLocks.dayKey(DAY));
            ps.execute();
        }
    }

    private void unlockDay(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?, ?)")) {
            ps.setInt(1, RunLocks.namespace(t.schema));
            ps.setInt(2, RunLocks.dayKey(DAY));
            ps.execute();
        }
    }

    private boolean waitsForDay(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                + " AND NOT granted AND classid::bigint = ? AND objid::bigint = ? AND objsubid = 2")) {
            ps.setLong(1, Integer.toUnsignedLong(RunLocks.namespace(t.schema)));
            ps.setLong(2, Integer.toUnsignedLong(RunLocks.dayKey(DAY)));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) == 1;
            }
        }
    }
}
