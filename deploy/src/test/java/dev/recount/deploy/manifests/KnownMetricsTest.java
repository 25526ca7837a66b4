package dev.recount.deploy.manifests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The PromQL reader and the known-metric checks that the alert rules and the dashboards are held to. */
class KnownMetricsTest {
    static final KnownMetrics KNOWN = new KnownMetrics(
            "getMetricGroup().counter(\"validEvents\"); group.addGroup(\"reason\", r).counter(\"invalidEvents\");"
                    + " SET_VARIABLE = \"metric_set\"; op.addGroup(SET_VARIABLE, set).counter(\"tooLateEvents\");",
            ".gauge(\"recount_reconcile_last_exit_code\", exitCode) .gauge(\"recount_correct_last_exit_code\", code)"
                    + " .gauge(\"recount_backfill_nightly_last_success_timestamp_seconds\", now)"
                    + " Pushgateway.outcome(COMPACT_JOB, code, code == 0, at) COMPACT_JOB = \"recount_lake_compact\"",
            Set.of("kube_job_status_failed"));

    @Test
    void readsTheNamesOfSelectorsNotLabelsFunctionsKeywordsOrVariables() {
        assertThat(KnownMetrics.metricNames(
                        "max by (job_name) (flink_jobmanager_job_uptime{job_name=~\"$job\"}) > 5 * 60 * 1000\n"
                                + "and on (job_name) sum without (subtask_index) (rate(a_total{reason=\"x y\"}[$__rate_interval] offset 5m))"
                                + " / ignoring (reason) group_left b:recorded unless time() - c_seconds > 1e3"))
                .containsExactlyInAnyOrder("flink_jobmanager_job_uptime", "a_total", "b:recorded", "c_seconds");
    }

    @Test
    void listsTheNamesANameMatcherSelects() {
        assertThat(KnownMetrics.metricNames(
                        "rate({__name__=~\"p_(one|two)_s\", job=\"j\"}[5m]) + {__name__=\"three\"}"))
                .containsExactlyInAnyOrder("p_one_s", "p_two_s", "three");
        assertThatThrownBy(() -> KnownMetrics.metricNames("{__name__=~\"p_.*\"}"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("cannot list the metrics");
    }

    @Test
    void knowsWhatTheJobRegistersTheJobManagerExportsAndTheScheduledCommandsPush() {
        KNOWN.check("rate(flink_taskmanager_job_task_operator_reason_invalidEvents[5m])", "here");
        KNOWN.check("flink_jobmanager_job_numRestarts + flink_taskmanager_job_task_operator_validEvents", "here");
        KNOWN.check("recount_reconcile_last_exit_code > 0 or kube_job_status_failed", "here");
        KNOWN.check("recount_correct_last_exit_code > 0", "here");
        KNOWN.check(
                "flink_taskmanager_Status_JVM_Memory_Heap_Used / flink_taskmanager_Status_JVM_Memory_Heap_Max", "here");
    }

    @Test
    void refusesWhatNobodyRegisters() {
        assertThatThrownBy(() -> KNOWN.check("flink_taskmanager_job_task_operator_validEvent", "panel P"))
                .hasMessageContaining("panel P: metric validEvent is registered by the streaming job");
        assertThatThrownBy(() -> KNOWN.check("flink_taskmanager_job_task_operator_kind_invalidEvents", "here"))
                .hasMessageContaining("metric groups kind are added");
        // A group added by a constant, whose key holds '_' itself: metric_set.
        KNOWN.check("flink_taskmanager_job_task_operator_metric_set_tooLateEvents", "here");
        assertThatThrownBy(() -> KNOWN.check("flink_taskmanager_job_task_operator_metric_kind_tooLateEvents", "here"))
                .hasMessageContaining("metric groups metric_kind are added");
        assertThatThrownBy(() -> KNOWN.check("flink_jobmanager_job_numberOfRestarts", "here"))
                .hasMessageContaining("JobManager's job metrics");
        assertThatThrownBy(() -> KNOWN.check("flink_taskmanager_Status_JVM_Memory_NonHeap_Used", "here"))
                .hasMessageContaining("TaskManager's JVM metrics");
        assertThatThrownBy(() -> KNOWN.check("recount_reconcile_days_late", "here"))
                .hasMessageContaining("pushed by reconcile pending, correct");
        assertThatThrownBy(() -> KNOWN.check("recount_correct_days_late", "here"))
                .hasMessageContaining("pushed by reconcile pending, correct");
        assertThatThrownBy(() -> KNOWN.check("recount_lake_compact_files_written", "here"))
                .hasMessageContaining("backfill nightly or backfill compact");
        KNOWN.check("recount_backfill_nightly_last_success_timestamp_seconds", "here");
        // Named after the job by Pushgateway.outcome: the job's name is in the source, the gauge's is not.
        KNOWN.check("recount_lake_compact_last_run_timestamp_seconds", "here");
        KNOWN.check("recount_lake_compact_last_success_timestamp_seconds", "here");
        assertThatThrownBy(() -> KNOWN.check("recount_lake_compact_last_start_timestamp_seconds", "here"))
                .hasMessageContaining("backfill nightly or backfill compact");
        assertThatThrownBy(() -> KNOWN.check("recount_correct_last_success_timestamp_seconds", "here"))
                .as("correct's source, as written here, has no outcome")
                .hasMessageContaining("backfill nightly or backfill compact");
        assertThatThrownBy(() -> KNOWN.check("up == 0", "here")).hasMessageContaining("up is no metric recount knows");
        assertThatThrownBy(() -> KNOWN.check("vector(1)", "here")).hasMessageContaining("reads some metric");
    }

    @Test
    void everyFlinkMetricRecountReadsIsDocumented() throws IOException {
        String operations = Files.readString(ManifestsTest.ROOT.resolve("docs/operations.md"));
        List<String> documented = new ArrayList<>(KnownMetrics.JOB_MANAGER_METRICS); // named as `<metric>`
        for (String metric : KnownMetrics.TASK_MANAGER_JVM_METRICS) {
            documented.add(KnownMetrics.TASK_MANAGER_JVM_PREFIX + metric); // named in full
        }
        for (String metric : documented) {
            assertThat(operations).as("docs/operations.md names " + metric).contains("`" + metric + "`");
        }
    }
}
