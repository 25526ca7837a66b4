package dev.recount.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReportTest {
    private static String block(String dir, String row) {
        return "Run 2026-12-01T00:00:00Z (raw logs: `" + dir + "` under bench/target)\n\nMachine: m\n\n"
                + "| measure | value | unit | notes |\n|---|---:|---|---|\n| " + row + " | 1 | s | |\n";
    }

    @Test
    void aRunOfItsOwnIsAppendedAfterTheEarlierRuns() {
        String section = block("run-a", "stream") + "\n" + block("run-b", "reconcile");
        assertThat(Report.withRun(section, "run-c", block("run-c", "freshness")))
                .isEqualTo(section + "\n" + block("run-c", "freshness"));
    }

    @Test
    void aRunAddingToAnEarlierRunsDirectoryReplacesThatRunsBlockInPlace() {
        String section = block("run-a", "stream") + "\n" + block("run-b", "reconcile");
        assertThat(Report.withRun(section, "run-a", block("run-a", "stream and freshness")))
                .isEqualTo(block("run-a", "stream and freshness") + "\n" + block("run-b", "reconcile"));
        assertThat(Report.withRun(section, "run-b", block("run-b", "reconcile again")))
                .isEqualTo(block("run-a", "stream") + "\n" + block("run-b", "reconcile again"));
    }

    @Test
    void anEmptySectionGetsTheRunAlone() {
        assertThat(Report.withRun("", "run-a", block("run-a", "stream"))).isEqualTo(block("run-a", "stream"));
    }
}
