package dev.recount.core.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.cli.Converters.DaysBackConverter;
import dev.recount.core.cli.Converters.DurationConverter;
import dev.recount.core.cli.Converters.InstantConverter;
import dev.recount.core.cli.Converters.SinceConverter;
import dev.recount.core.config.ConfigException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The shared command-line layer, on a small command tree of its own, in-process with captured output. */
class RecountCliTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** A refusal, as a command's own exception says it. */
    static final class NotReady extends IllegalStateException implements CodedFailure {
        NotReady(String message) {
            super(message);
        }

        @Override
        public ExitCode exitCode() {
            return ExitCode.REFUSED;
        }
    }

    /** A command group with its own exit codes, which its subcommands inherit. */
    @Command(name = "tool", subcommands = Tool.Run.class)
    @ExitsWith(code = ExitCode.REFUSED, when = "the input is not there yet")
    static final class Tool implements Runnable {
        @Override
        public void run() {}

        /** A command that fails as it is told to, to see each failure's exit code and line. */
        @Command(name = "run")
        @OldName(name = "--period", now = "--every")
        @OldName(name = "--from-start", now = "--from-earliest")
        @OldName(
                name = "--days",
                now = "--since",
                converter = DaysBackConverter.class,
                paramLabel = "N",
                means = "--days N is --since Nd")
        static final class Run implements Callable<Integer> {
            @Option(names = "--every", converter = DurationConverter.class)
            Duration every;

            @Option(names = "--at", converter = InstantConverter.class)
            Instant at;

            @Option(names = "--from-earliest")
            boolean fromEarliest;

            @Option(names = "--since", converter = SinceConverter.class)
            Since since;

            @Option(names = "--fail")
            String fail;

            @Override
            public Integer call() {
                if ("config".equals(fail)) throw new ConfigException("setting window.size: cannot read duration '7x'");
                if ("usage".equals(fail)) throw new UsageException("--events must be >= 1, got -5");
                if ("refused".equals(fail)) throw new NotReady("the lake is behind");
                if ("framework".equals(fail)) {
                    throw new RuntimeException(new java.io.IOException("Connection refused\n  at somewhere"));
                }
                return 0;
            }
        }
    }

    /** A command that waits, as up, correct and reconcile pending do. */
    @Command(name = "waiter")
    @WaitsFor(value = "the other run to finish", byDefault = "30s")
    @ExitsWith(code = ExitCode.BUSY, when = "the other run did not finish in time")
    static final class Waiter implements Callable<Integer> {
        @Mixin
        WaitOption wait;

        Duration seen;

        @Override
        public Integer call() {
            seen = wait.duration();
            return 0;
        }
    }

    private final Tool.Run run = new Tool.Run();
    private final Waiter waiter = new Waiter();

    private CommandLine cli() {
        CommandLine cli = RecountCli.of("a test tool", new Tool(), waiter).commandLine();
        // The subcommand as an object, so the test can read what it was given.
        return cli;
    }

    private int run(String... args) {
        CommandLine tree = RecountCli.of(
                        "a test tool",
                        new CommandLine.IFactory() {
                            @Override
                            public <K> K create(Class<K> cls) throws Exception {
                                return cls == Tool.Run.class
                                        ? cls.cast(run)
                                        : CommandLine.defaultFactory().create(cls);
                            }
                        },
                        Tool.class,
                        waiter)
                .commandLine();
        return RecountCli.execute(tree, new PrintWriter(out), new PrintWriter(err), args);
    }

    private String errLine() {
        return err.toString().strip();
    }

    @Test
    void everyTreeHasTheOneRootAndNoCommandIsAUsageErrorNamingTheCommands() {
        assertThat(run()).isEqualTo(2);
        assertThat(errLine()).isEqualTo("recount: missing command: tool, waiter (see recount --help)");
    }

    @Test
    void anUnknownCommandIsAUsageError() {
        assertThat(run("walk")).isEqualTo(2);
        assertThat(errLine()).isEqualTo("recount: Unmatched argument at index 0: 'walk' (see recount --help)");
    }

    @Test
    void anUnknownOptionIsAUsageErrorNamingTheSubcommand() {
        assertThat(run("tool", "run", "--evry", "5s")).isEqualTo(2);
        assertThat(errLine())
                .startsWith("recount tool run: Unknown options: '--evry'")
                .endsWith("(see recount tool run --help)");
    }

    @Test
    void anUnreadableDurationOrInstantIsAUsageError() {
        assertThat(run("tool", "run", "--every", "7x")).isEqualTo(2);
        assertThat(errLine())
                .startsWith("recount tool run: ")
                .contains("cannot read duration '7x'")
                .doesNotContain("\n");
        err.getBuffer().setLength(0);
        assertThat(run("tool", "run", "--at", "yesterday")).isEqualTo(2);
        assertThat(errLine()).contains("cannot read instant 'yesterday'");
    }

    @Test
    void bothDurationFormatsAreRead() {
        assertThat(new DurationConverter().convert("30s")).isEqualTo(new DurationConverter().convert("PT30S"));
    }

    @Test
    void aBadSettingOrAUsageExceptionAtRunTimeIsAUsageError() {
        assertThat(run("tool", "run", "--fail", "config")).isEqualTo(2);
        assertThat(errLine()).isEqualTo("recount tool run: setting window.size: cannot read duration '7x'");
        err.getBuffer().setLength(0);
        assertThat(run("tool", "run", "--fail", "usage")).isEqualTo(2);
        assertThat(errLine()).isEqualTo("recount tool run: --events must be >= 1, got -5");
    }

    @Test
    void aCodedFailureExitsWithItsCodeAndSaysItsLabel() {
        assertThat(run("tool", "run", "--fail", "refused")).isEqualTo(ExitCode.REFUSED.code());
        assertThat(errLine()).isEqualTo("recount tool run: refused: the lake is behind");
    }

    @Test
    void anyOtherFailureExitsOneWithTheInnermostReasonOnOneLine() {
        assertThat(run("tool", "run", "--fail", "framework")).isEqualTo(1);
        assertThat(errLine()).isEqualTo("recount tool run: IOException: Connection refused at somewhere");
    }

    @Test
    void everyCommandHasVersionAndHelpWithItsExitCodesFromTheTable() {
        assertThat(run("tool", "run", "--version")).isZero();
        assertThat(out.toString().strip()).isEqualTo("recount " + RecountVersion.version());
        out.getBuffer().setLength(0);
        assertThat(run("--version")).isZero();
        assertThat(out.toString().strip()).isEqualTo("recount " + RecountVersion.version());
        out.getBuffer().setLength(0);
        assertThat(run("tool", "run", "--help")).isZero();
        assertThat(out.toString())
                .contains("--every", "-V, --version", "Exit codes:")
                .contains("  0   success", "  1   failed: ", "  2   bad command line")
                .contains("  4   refused: the input is not there yet")
                .doesNotContain("  3 ", "--period", "--days");
        out.getBuffer().setLength(0);
        assertThat(run("waiter", "--help")).isZero();
        assertThat(out.toString())
                .contains("  5   busy: the other run did not finish in time")
                .doesNotContain("  4 ");
    }

    @Test
    void anOldSpellingWorksWithOneWarningLine() {
        assertThat(run("tool", "run", "--period", "5s")).isZero();
        assertThat(run.every).isEqualTo(Duration.ofSeconds(5));
        assertThat(errLine()).isEqualTo("recount tool run: --period is deprecated, use --every");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void anOldFlagSetsTheNewOne() {
        assertThat(run("tool", "run", "--from-start")).isZero();
        assertThat(run.fromEarliest).isTrue();
        assertThat(errLine()).isEqualTo("recount tool run: --from-start is deprecated, use --from-earliest");
    }

    @Test
    void anOldSpellingCanReadItsValueItsOwnWay() {
        assertThat(run("tool", "run", "--days", "7")).isZero();
        assertThat(run.since).isEqualTo(Since.daysBack(7));
        assertThat(errLine()).isEqualTo("recount tool run: --days is deprecated, use --since (--days N is --since Nd)");
        err.getBuffer().setLength(0);
        assertThat(run("tool", "run", "--days", "-1")).isEqualTo(2);
        assertThat(errLine()).contains("'-1' is not a number of days of at least 1");
    }

    @Test
    void theNewSpellingWarnsAboutNothing() {
        assertThat(run("tool", "run", "--every", "5s", "--since", "2026-11-20")).isZero();
        assertThat(run.since).isEqualTo(Since.date(LocalDate.of(2026, 11, 20)));
        assertThat(err.toString()).isEmpty();
    }

    @Test
    void waitReadsTheSameEverywhereWithTheCommandsOwnDefault() {
        assertThat(run("waiter")).isZero();
        assertThat(waiter.seen).isEqualTo(Duration.ofSeconds(30));
        assertThat(run("waiter", "--wait", "2m")).isZero();
        assertThat(waiter.seen).isEqualTo(Duration.ofMinutes(2));
        assertThat(run("waiter", "--help")).isZero();
        assertThat(out.toString().replaceAll("\\s+", " ")) // --help wraps the description
                .contains("--wait=DURATION")
                .contains("How long to wait for the other run to finish before giving up (default: 30s).");
    }

    @Command(name = "impatient")
    static final class WaitsForNothingSaid implements Runnable {
        @Mixin
        WaitOption wait;

        @Override
        public void run() {}
    }

    @Command(name = "renamer")
    @OldName(name = "--old", now = "--missing")
    static final class RenamesWhatItLacks implements Runnable {
        @Override
        public void run() {}
    }

    @Command(name = "twice")
    @ExitsWith(code = ExitCode.REFUSED, when = "one thing")
    @ExitsWith(code = ExitCode.REFUSED, when = "another")
    static final class TwoMeanings implements Runnable {
        @Override
        public void run() {}
    }

    @Test
    void aCommandMustSayWhatItWaitsForWhatItRenamedAndOneMeaningPerCode() {
        assertThatThrownBy(() -> RecountCli.of("x", new WaitsForNothingSaid()).commandLine())
                .hasMessageContaining("recount impatient takes --wait but does not say what for");
        assertThatThrownBy(() -> RecountCli.of("x", new RenamesWhatItLacks()).commandLine())
                .hasMessageContaining("@OldName --old names --missing, which the command does not have");
        assertThatThrownBy(() -> RecountCli.of("x", new TwoMeanings()).commandLine())
                .hasMessageContaining("gives exit code 4 (refused) two meanings");
    }

    @Test
    void theErrorPrinterIsOneLineUnderTheCommandsName() {
        CommandLine cli = cli();
        StringWriter captured = new StringWriter();
        cli.setErr(new PrintWriter(captured));
        RecountCli.err(cli.getSubcommands().get("waiter").getCommandSpec(), "gave up\n  after 30s");
        assertThat(captured.toString()).isEqualTo("recount waiter: gave up after 30s" + System.lineSeparator());
    }

    @Test
    void theVersionIsTheBuilds() {
        assertThat(RecountVersion.version()).matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    }

    @Test
    void theTreeIsDescribedWithEveryOptionNameExitCodeAndOldSpelling() {
        assertThat(CommandTree.describe(cli()))
                .contains(
                        "command recount",
                        "command recount tool",
                        "command recount tool run",
                        "option recount tool run --every",
                        "option recount tool run -V",
                        "option recount tool run --version",
                        "exit recount tool run 4",
                        "exit recount waiter 5",
                        "alias recount tool run --period --every",
                        "alias recount tool run --days --since")
                .doesNotContain("option recount tool run --period", "exit recount waiter 4");
    }
}
