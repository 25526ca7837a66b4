package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReliabilityReportTest {
    @TempDir
    Path dir;

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
