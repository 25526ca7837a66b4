package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The Pushgateway text of `reconcile pending`: what the alerts read. */
class PendingMetricsTest {
    private static final Instant AT = Instant.parse("2026-11-29T03:30:00Z");

    @Test
    void aRunThatReconciledRecordsItsSuccess() {
        assertThat(new PendingMetrics(3, 2, 1, 0, AT).text()).isEqualTo("""
                # TYPE recount_reconcile_last_run_timestamp_seconds gauge
                recount_reconcile_last_run_timestamp_seconds 1795923000
                # TYPE recount_reconcile_last_exit_code gauge
                recount_reconcile_last_exit_code 3
                # TYPE recount_reconcile_last_success_timestamp_seconds gauge
                recount_reconcile_last_success_timestamp_seconds 1795923000
                # TYPE recount_reconcile_days_reconciled gauge
                recount_reconcile_days_reconciled 2
                # TYPE recount_reconcile_days_beyond_tolerance gauge
                recount_reconcile_days_beyond_tolerance 1
                # TYPE recount_reconcile_days_not_covered gauge
                recount_reconcile_days_not_covered 0
                """);
    }

    @Test
    void aFailedRunLeavesTheLastSuccessAlone() {
        assertThat(new PendingMetrics(1, 0, 0, 0, AT).text())
                .contains("recount_reconcile_last_exit_code 1")
                .doesNotContain("last_success");
        assertThat(new PendingMetrics(4, 1, 0, 1, AT).text()).doesNotContain("last_success");
    }
}
