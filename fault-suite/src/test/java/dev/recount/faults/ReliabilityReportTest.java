package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReliabilityReportTest {
    @TempDir
    Path dir;

    /** One row per fault and one per fault and set, a round that did not get as far as the judge not exact. */
    @Test
    void theReportHasARowPerFaultAndSetAndSaysWhichAreNotExact() {
        AccountingFixture f = new AccountingFixture();
        Accounting.Result exact = f.judge().withServed(Accounting.served(f.sent, f.servedAsTruth()));
        f.streamRows.clear();
        f.streamRows.putAll(f.streamCounting("e1", "e4"));
        Accounting.Result lost = f.judge().withServed(Accounting.served(f.sent, f.servedAsTruth()));
        List<RoundResult> rounds = List.of(
                new RoundResult(
                        Fault.KILL_STREAM_ONCE, 1, List.of(Duration.ofSeconds(3)), exact, List.of(), Duration.ZERO),
                new RoundResult(Fault.KILL_STREAM, 5, List.of(Duration.ofSeconds(4)), lost, List.of(), Duration.ZERO),
                new RoundResult(
                        Fault.BROKER_RESTART,
                        0,
                        List.of(),
                        Accounting.Result.notJudged("round did not complete: boom"),
                        List.of(),
                        Duration.ZERO));

        String md = ReliabilityReport.render(rounds, "fault-suite/run.sh", "a machine", Instant.EPOCH);

        assertThat(md)
                .contains("| KILL_STREAM_ONCE | default | 0 | 0 | 0 | 0 / - | yes |")
                .contains("| KILL_STREAM_ONCE | channel_country | 0 | 0 | 0 | 0 / 0 | yes |")
                .contains("| KILL_STREAM | campaign_slot | 1 | 0 | 1 | 0 / - | **no** |")
                .contains("| `BROKER_RESTART`: " + Fault.BROKER_RESTART.description
                        + " | 1 | 0 | 0 / 0 / 0 / 0 | 0 / 0 / 0 | 0 / 0 / 0 / 0 | 1" + " | - | **no** |")
                .contains("round did not complete: boom");
    }

    @Test
    void aRunGetsAFileOfItsOwnNamedByItsStartInUtc() {
        assertThat(ReliabilityReport.runFileName(Instant.parse("2026-12-04T14:43:05Z")))
                .isEqualTo("run-20261204T144305.md");
    }

    @Test
    void aNewFileIsCreatedWithItsDirectoriesATitleAndTheSection() throws Exception {
        Path file = dir.resolve("fault-suite/results/run-20261204T144305.md");

        ReliabilityReport.writeInto(file, "| fault | ... |\n");

        assertThat(Files.readString(file))
                .isEqualTo("# Fault suite run run-20261204T144305\n\n" + ReliabilityReport.BEGIN + "\n| fault | ... |\n"
                        + ReliabilityReport.END + "\n");
    }

    @Test
    void anExistingFileKeepsItsTextAndOnlyItsSectionIsReplaced() throws Exception {
        Path file = dir.resolve("notes.md");
        Files.writeString(
                file,
                "# Notes\n\nbefore\n" + ReliabilityReport.BEGIN + "\nold\n" + ReliabilityReport.END + "\nafter\n");

        ReliabilityReport.writeInto(file, "new\n");

        assertThat(Files.readString(file))
                .isEqualTo("# Notes\n\nbefore\n" + ReliabilityReport.BEGIN + "\nnew\n" + ReliabilityReport.END
                        + "\nafter\n");
    }
}
