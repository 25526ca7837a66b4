package dev.recount.stream;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line, in-process with captured output: help, and one-line failures before anything is started. */
class StreamJobMainTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return StreamJobMain.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    @Test
    void helpListsTheContractFlags() {
        assertThat(run("stream", "--help")).isZero();
        assertThat(out.toString())
                .contains(
                        "--bounded",
                        "--from-earliest",
                        "--allow-non-restored-state",
                        "--skip-deleted-input",
                        "--window",
                        "--out-of-orderness",
                        "--allowed-lateness",
                        "--idleness",
                        "--config",
                        "--parallelism");
    }

    @Test
    void aBadDurationIsAUsageErrorOnOneLine() {
        assertThat(run("stream", "--window", "banana")).isEqualTo(2);
        assertThat(err.toString()).startsWith("recount stream: ").contains("banana");
        assertThat(err.toString().strip()).doesNotContain("\n");
    }

    @Test
    void aDedupHorizonTooShortForTheLatenessIsRejected() {
        assertThat(run("stream", "--allowed-lateness", "-5m")).isNotZero();
        assertThat(err.toString().strip()).startsWith("recount stream: ").doesNotContain("\n");
    }

    @Test
    void aMalformedNumberIsAUsageErrorOnOneLine() {
        assertThat(run("stream", "--parallelism", "many")).isEqualTo(2);
        assertThat(err.toString().strip())
                .startsWith("recount stream: ")
                .contains("many")
                .doesNotContain("\n");
    }

    @Test
    void aShorthandDurationThatIsNoDurationIsAUsageError() {
        assertThat(run("stream", "--window", "7x")).isEqualTo(2);
        assertThat(err.toString().strip())
                .startsWith("recount stream: ")
                .contains("7x")
                .endsWith("(see recount stream --help)")
                .doesNotContain("\n");
    }

    @Test
    void anUnknownOptionIsAUsageError() {
        assertThat(run("stream", "--windw", "1m")).isEqualTo(2);
        assertThat(err.toString().strip()).startsWith("recount stream: ").contains("--windw");
    }

    @Test
    void versionIsTheBuilds() {
        assertThat(run("stream", "--version")).isZero();
        assertThat(out.toString().strip()).matches("recount \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    }

    @Test
    void aMissingConfigFileIsNamed() {
        assertThat(run("stream", "--config", "/nonexistent/recount.properties")).isEqualTo(2);
        assertThat(err.toString()).contains("/nonexistent/recount.properties");
    }

    /** The definitions are loaded before anything starts: a bad file is exit 2, one line naming it. */
    @Test
    void aBadDefinitionsFileStopsTheStartWithExitTwo(@TempDir Path dir) throws Exception {
        Path sets = dir.resolve("sets.yaml");
        Files.writeString(sets, "version: 1\nsets:\n  - name: Not A Name\n");
        Path config = dir.resolve("recount.properties");
        Files.writeString(config, "metric-sets.file=" + sets + "\n");
        assertThat(run("stream", "--config", config.toString())).isEqualTo(2);
        assertThat(err.toString().strip())
                .startsWith("recount stream: ")
                .contains(sets.toString())
                .doesNotContain("\n");
    }

    @Test
    void flinksRefusalOfUnclaimedStateNamesOurFlagOnOneLine() {
        // The message Flink 2.2 gives when a checkpoint holds state of an operator the job no longer has.
        Exception refused = new RuntimeException(
                "Failed to rollback to checkpoint/savepoint file:/x/savepoint-1.",
                new IllegalStateException("Failed to rollback to checkpoint/savepoint file:/x/savepoint-1. Cannot map"
                        + " checkpoint/savepoint state for operator 877e to the new program, because the operator is"
                        + " not available in the new program. If you want to allow to skip this, you can set the"
                        + " --allowNonRestoredState option on the CLI.\n"));
        assertThat(StreamJobMain.oneLine(refused))
                .endsWith("you can start `recount stream` with --allow-non-restored-state.")
                .doesNotContain("\n");
    }
}
