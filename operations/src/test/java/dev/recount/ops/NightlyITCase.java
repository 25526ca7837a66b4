package dev.recount.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.core.cli.ExitCode;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.ops.testutils.OpsStack;
import dev.recount.testkit.DefaultSet;
import dev.recount.testkit.RecordingPushgateway;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nightly} end to end on real parts: PostgreSQL and Kafka from the local stack, a Parquet lake, a local
 * SparkSession; each outcome checked by its exit code. The CLI's clock says 2026-11-29T06:00Z, so "yesterday" is
 * 2026-11-28 (time-zone UTC).
 */
class NightlyITCase {
    private static final long W1 = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final long W0 = Instant.parse("2026-11-27T15:00:00Z").toEpochMilli();
    private static final LakeEvent A1 = LakeEvent.of("a1", "impression", W1 + 1_000, "c1", "ch1", 10, 1);
    private static final LakeEvent B1 = LakeEvent.of("b1", "click", W1 + 2_000, "c1", "ch1", 20, 2);
    private static final LakeEvent D1 = LakeEvent.of("d1", "impression", W0 + 1_000, "c2", "ch1", 7, 3);

    @TempDir
    Path dir;

    OpsStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new OpsStack(dir);
        new BackfillTopic(t.batch, 1);
        t.batch.lake.write(List.of(A1, B1, D1));
    }

    @Test
    void aDayThatMatchesIsBackfilledCompactedAndReconciledWithinTolerance() throws Exception {
        t.batch.lakeCompleteUntil(Instant.parse("2026-11-29T01:00:00Z"));
        t.stream(W1, "c1", "ch1", DefaultSet.values(1, 1, 0, 30, 2));

        try (RecordingPushgateway pushgateway = new RecordingPushgateway()) {
            assertThat(t.runWith(pushgateway.environment(), "nightly"))
                    .as(t.lastErr)
                    .isEqualTo(ExitCode.OK.code());
            // The backfill and the compaction it runs push as `backfill nightly` and `backfill compact` do.
            assertThat(pushgateway.pushes())
                    .extracting(RecordingPushgateway.Push::path)
                    .containsExactly("/metrics/job/recount_backfill_nightly", "/metrics/job/recount_lake_compact");
            assertThat(pushgateway.pushes())
                    .allSatisfy(p -> assertThat(p.body()).contains("_last_exit_code 0\n", "_last_success_timestamp"));
        }

        assertThat(t.lastOut)
                .contains("2026-11-28: backfill", "2026-11-28: compact", "2026-11-28: reconcile", "WITHIN TOLERANCE");
        assertThat(t.batch.lastRunOfMode(BatchRunsTable.Mode.NIGHTLY).status())
                .isEqualTo(BatchRunsTable.Status.SUCCEEDED);
        ReconciliationRunsTable.Run reconciled = t.reconciliations().get(0);
        assertThat(reconciled.rangeFrom())
                .isEqualTo(Instant.parse("2026-11-28T00:00:00Z").toEpochMilli());
        assertThat(reconciled.rangeTo())
                .isEqualTo(Instant.parse("2026-11-29T00:00:00Z").toEpochMilli());
    }

    @Test
    void aDayThatDiffersIsCorrectedAndExitsBeyondTolerance() throws Exception {
        t.batch.lakeCompleteUntil(Instant.parse("2026-11-29T01:00:00Z"));
        t.stream(W1, "c1", "ch1", DefaultSet.values(1, 0, 0, 10, 1)); // the stream never counted the click

        assertThat(t.run("nightly")).as(t.lastErr).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());

        assertThat(t.lastOut).contains("BEYOND TOLERANCE");
        assertThat(t.lastErr).contains("2026-11-28: beyond tolerance (see the report); continuing");
        assertThat(t.reconciliations())
                .singleElement()
                .satisfies(r -> assertThat(r.status()).isEqualTo(ReconciliationRunsTable.Status.SUCCEEDED));
    }

    @Test
    void aDayTheLakeDoesNotHaveYetIsRefusedAndNothingIsReconciled() throws Exception {
        t.batch.lakeCompleteUntil(Instant.parse("2026-11-28T12:00:00Z")); // the stream is half a day behind

        try (RecordingPushgateway pushgateway = new RecordingPushgateway()) {
            assertThat(t.runWith(pushgateway.environment(), "nightly")).isEqualTo(ExitCode.REFUSED.code());
            // Refused (backfill exit 4): no success recorded, and no compaction ran.
            assertThat(pushgateway.pushes()).singleElement().satisfies(p -> {
                assertThat(p.path()).isEqualTo("/metrics/job/recount_backfill_nightly");
                assertThat(p.body())
                        .contains("recount_backfill_nightly_last_exit_code " + ExitCode.REFUSED.code() + "\n")
                        .doesNotContain("last_success");
            });
        }

        assertThat(t.lastErr)
                .contains("the lake is complete only until", "2026-11-28: backfill did not succeed (exit 4)");
        assertThat(t.lastOut).doesNotContain("2026-11-28: compact");
        assertThat(t.reconciliations()).isEmpty();
    }

    @Test
    void dateInTheEqualsFormRunsThatDay() throws Exception {
        t.batch.lakeCompleteUntil(Instant.parse("2026-11-29T01:00:00Z"));
        t.stream(W0, "c2", "ch1", DefaultSet.values(1, 0, 0, 7, 1));

        assertThat(t.run("nightly", "--date=2026-11-27")).as(t.lastErr).isEqualTo(ExitCode.OK.code());

        assertThat(t.lastOut).contains("2026-11-27: reconcile").doesNotContain("recount nightly: 2026-11-28");
        ReconciliationRunsTable.Run reconciled = t.reconciliations().get(0);
        assertThat(reconciled.rangeFrom())
                .isEqualTo(Instant.parse("2026-11-27T00:00:00Z").toEpochMilli());
        assertThat(reconciled.status()).isEqualTo(ReconciliationRunsTable.Status.SUCCEEDED);
    }
}
