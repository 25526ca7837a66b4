package dev.recount.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReportTest {
    private static final Instant FINISHED = Instant.parse("2026-12-04T15:18:01Z");

    @Test
    void aRunNamesItsCommandsTheirCommitAndTheMachineAboveItsRows() {
        String report = Report.render(
                "run-20261204T151209",
                FINISHED,
                List.of("7094246\tbench/run.sh --home H --only stream"),
                "nproc 2",
                List.of("ratio_a_over_b2\t1.96\tx\tthroughput a / throughput b2"));

        assertThat(report).isEqualTo("""
                        # Benchmark run run-20261204T151209

                        Run 2026-12-04T15:18:01Z (raw logs: `run-20261204T151209` under bench/target)

                        Commands:

                        - `bench/run.sh --home H --only stream` on commit 7094246

                        Machine: nproc 2

                        | measure | value | unit | notes |
                        |---|---:|---|---|
                        | ratio_a_over_b2 | 1.96 | x | throughput a / throughput b2 |
                        """);
    }

    @Test
    void aRunAddedToInSeveralGoesListsEveryInvocationInOrder() {
        String report = Report.render(
                "run-a",
                FINISHED,
                List.of(
                        "aaa\tbench/run.sh --only stream",
                        "bbb\tBENCH_OUT=bench/target/run-a bench/run.sh --only memory"),
                "m",
                List.of());

        assertThat(report)
                .contains("- `bench/run.sh --only stream` on commit aaa\n"
                        + "- `BENCH_OUT=bench/target/run-a bench/run.sh --only memory` on commit bbb\n");
    }

    @Test
    void aNoteCannotBreakTheTable() {
        assertThat(Report.render("run-a", FINISHED, List.of(), "m", List.of("x\t1\ts\tall [1|2]", "", "y\t2")))
                .endsWith("| x | 1 | s | all [1/2] |\n| y | 2 |  |  |\n")
                .doesNotContain("Commands:");
    }
}
