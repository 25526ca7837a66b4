package dev.recount.core.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.cli.Converters.DurationConverter;
import dev.recount.core.cli.Converters.InstantConverter;
import dev.recount.core.config.ConfigException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The shared command-line layer, on a small command tree of its own, in-process with captured output. */
class RecountCliTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** A command that fails as it is told to, to see each failure's exit code and line. */
    @Command(name = "tool", subcommands = Tool.Run.class)
    static final class Tool implements Runnable {
        @Override
        public void run() {}

        @Command(name = "run")
        static final class Run implements Callable<Integer> {
            @Option(names = "--every", converter = DurationConverter.class)
            Duration every;

            @Option(names = "--at", converter = InstantConverter.class)
            Instant at;

            @Option(names = "--fail")
            String fail;

            @Override
            public Integer call() {
                if ("config".equals(fail)) throw new ConfigException("setting window.size: cannot read duration '7x'");
                if ("usage".equals(fail)) throw new UsageException("--events must be >= 1, got -5");
                if ("refused".equals(fail)) throw new IllegalStateException("refused: not yet");
                if ("framework".equals(fail)) {
                    throw new RuntimeException(new java.io.IOException("Connection refused\n  at somewhere"));
                }
                return 0;
            }
        }
    }

    /** The exit codes of the test tool: the shared three and one of its own. */
    static final class ToolExitCodes {
        @ExitCodeMeaning("done")
        static final int OK = 0;

        @ExitCodeMeaning("failed")
        static final int FAILED = 1;

        @ExitCodeMeaning("bad arguments")
        static final int USAGE = 2;

        @ExitCodeMeaning("refused")
        static final int REFUSED = 3;
    }

    private int run(String... args) {
        CommandLine cli = RecountCli.configure(new CommandLine(new Tool()))
                .exitCodes(ToolExitCodes.class)
                .failureCodes(ex -> ex instanceof IllegalStateException ? ToolExitCodes.REFUSED : ToolExitCodes.FAILED)
                .commandLine();
        return RecountCli.execute(cli, new PrintWriter(out), new PrintWriter(err), args);
    }

    @Test
    void anUnknownCommandIsAUsageError() {
        assertThat(run("walk")).isEqualTo(2);
        assertThat(err.toString())
                .isEqualTo("recount tool: Unmatched argument at index 0: 'walk' (see recount tool --help)"
                        + System.lineSeparator());
    }

    @Test
    void anUnknownOptionIsAUsageErrorNamingTheSubcommand() {
        assertThat(run("run", "--evry", "5s")).isEqualTo(2);
        assertThat(err.toString().strip())
                .startsWith("recount tool run: Unknown options: '--evry'")
                .endsWith("(see recount tool run --help)");
    }

    @Test
    void anUnreadableDurationOrInstantIsAUsageError() {
        assertThat(run("run", "--every", "7x")).isEqualTo(2);
        assertThat(err.toString().strip())
                .startsWith("recount tool run: ")
                .contains("cannot read duration '7x'")
                .doesNotContain("\n");
        err.getBuffer().setLength(0);
        assertThat(run("run", "--at", "yesterday")).isEqualTo(2);
        assertThat(err.toString().strip()).contains("cannot read instant 'yesterday'");
    }

    @Test
    void bothDurationFormatsAreRead() {
        assertThat(new DurationConverter().convert("30s")).isEqualTo(new DurationConverter().convert("PT30S"));
    }

    @Test
    void aBadSettingOrAUsageExceptionAtRunTimeIsAUsageError() {
        assertThat(run("run", "--fail", "config")).isEqualTo(2);
        assertThat(err.toString().strip())
                .isEqualTo("recount tool run: setting window.size: cannot read duration '7x'");
        err.getBuffer().setLength(0);
        assertThat(run("run", "--fail", "usage")).isEqualTo(2);
        assertThat(err.toString().strip()).isEqualTo("recount tool run: --events must be >= 1, got -5");
    }

    @Test
    void aFailureGetsTheCommandsOwnCodeAndOneLine() {
        assertThat(run("run", "--fail", "refused")).isEqualTo(3);
        assertThat(err.toString().strip()).isEqualTo("recount tool run: refused: not yet");
        err.getBuffer().setLength(0);
        assertThat(run("run", "--fail", "framework")).isEqualTo(1);
        assertThat(err.toString().strip()).isEqualTo("recount tool run: IOException: Connection refused at somewhere");
    }

    @Test
    void everyCommandHasVersionAndHelpWithTheExitCodes() {
        assertThat(run("run", "--version")).isZero();
        assertThat(out.toString().strip()).isEqualTo("recount " + RecountVersion.version());
        out.getBuffer().setLength(0);
        assertThat(run("--version")).isZero();
        assertThat(out.toString().strip()).isEqualTo("recount " + RecountVersion.version());
        out.getBuffer().setLength(0);
        assertThat(run("run", "--help")).isZero();
        assertThat(out.toString()).contains("--every", "-V, --version", "Exit codes:", "3   refused");
    }

    @Test
    void theVersionIsTheBuilds() {
        assertThat(RecountVersion.version()).matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    }

    static final class Unexplained {
        static final int OK = 0;
    }

    static final class WithoutTheSharedCodes {
        @ExitCodeMeaning("done")
        static final int OK = 0;
    }

    @Test
    void anExitCodeClassMustExplainEveryCodeAndKeepTheSharedOnes() {
        assertThatThrownBy(() -> RecountCli.exitCodeList(Unexplained.class))
                .hasMessageContaining("Unexplained.OK has no @ExitCodeMeaning");
        assertThatThrownBy(() -> RecountCli.exitCodeList(WithoutTheSharedCodes.class))
                .hasMessageContaining("lacks the shared exit code 1");
    }

    @Test
    void theTreeIsDescribedWithEveryOptionNameAndExitCode() {
        CommandLine cli = RecountCli.configure(new CommandLine(new Tool()))
                .exitCodes(ToolExitCodes.class)
                .commandLine();
        assertThat(CommandTree.describe(cli))
                .contains(
                        "command recount tool",
                        "command recount tool run",
                        "option recount tool run --every",
                        "option recount tool run -V",
                        "option recount tool run --version",
                        "exit recount tool run 3");
    }
}
