package dev.recount.batch;

import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.ExitsWith;
import dev.recount.core.cli.RecountCli;
import java.io.PrintWriter;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/**
 * {@code ./recount backfill range|affected|nightly|compact}: recompute the metric sets' windows exactly from the raw
 * event lake, and compact it (docs/contract.md). Also the main class of the spark-submit application jar, called
 * with the subcommand first ({@code BackfillMain nightly}). Exit codes: recount's {@link ExitCode}. Each subcommand is its own class ({@link RangeCommand}, {@link AffectedCommand}, {@link
 * NightlyCommand}, {@link CompactCommand}) on {@link BackfillCommand}, which holds what they share.
 */
@Command(
        name = "backfill",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        subcommands = {RangeCommand.class, AffectedCommand.class, NightlyCommand.class, CompactCommand.class},
        description = {
            "Recompute the metric sets' windows exactly from the raw event lake with Spark;",
            "compact the lake's small files and apply lake.retention."
        })
@ExitsWith(
        code = ExitCode.REFUSED,
        when = "nothing written: the range reaches beyond the lake's completeness boundary (the stream is behind:"
                + " retry later, or --force), or before its retention horizon, or a lake hour of it holds fewer rows"
                + " than the stream archived into it (files lost: restore them, or --force), or the stream's rows in"
                + " it have another window size")
@ExitsWith(
        code = ExitCode.BUSY,
        when = "an overlapping backfill or compaction held its lock longer than batch.lock-timeout")
public final class BackfillMain implements Callable<Integer> {
    final Map<String, String> environment;
    final Clock clock;
    final SparkSessions sparkSessions;
    final long driverMaxRows;

    @Spec
    CommandLine.Model.CommandSpec spec;

    public BackfillMain(Map<String, String> environment, Clock clock, SparkSessions sparkSessions, long driverMaxRows) {
        this.environment = Map.copyOf(environment);
        this.clock = clock;
        this.sparkSessions = sparkSessions;
        this.driverMaxRows = driverMaxRows;
    }

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }

    /** Runs one command line in-process and returns its exit code; output and errors go to {@code out}/{@code err}. */
    public static int execute(BackfillMain main, PrintWriter out, PrintWriter err, String... args) {
        return RecountCli.execute(commandLine(main), out, err, args);
    }

    /** The command line users get (nothing is opened until a subcommand executes). */
    public static CommandLine commandLine() {
        return commandLine(new BackfillMain(
                System.getenv(), Clock.systemUTC(), SparkSessions.OWNED, BackfillRunner.DEFAULT_DRIVER_MAX_ROWS));
    }

    static CommandLine commandLine(BackfillMain main) {
        return RecountCli.single(CommandLine.defaultFactory(), main).commandLine();
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(
                spec.commandLine(), "missing command: range, affected, nightly or compact");
    }
}
