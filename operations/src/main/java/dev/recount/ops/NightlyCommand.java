package dev.recount.ops;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.Converters.SinceConverter;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.ExitsWith;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.cli.Since;
import dev.recount.core.config.Instants;
import dev.recount.core.config.RecountConfig;
import java.io.PrintWriter;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code nightly}: backfill a day, compact the lake, reconcile the same day; or catch up every missed day. */
@Command(
        name = "nightly",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "For each day: `backfill nightly --date D` (the day, midnight to midnight in the configured time-zone,"
                    + " then the windows the backfill topic names), `backfill compact --date D --lookback` (the"
                    + " lake's small files into large ones; lake.retention), then `reconcile --date D` (diff,"
                    + " corrections, report).",
            "Default: yesterday in time-zone. --since D catches up every day from D to yesterday that no succeeded"
                    + " reconciliation covers, oldest first. Safe to rerun: each step replaces its results for the day.",
            "A failed backfill or reconciliation stops the run (later days are not run, so none is skipped silently);"
                    + " a failed compaction is reported and the run goes on (no result depends on it)."
        })
@ExitsWith(
        code = ExitCode.OK,
        when = "every day backfilled, compacted and reconciled within tolerance (or nothing to catch up)")
@ExitsWith(
        code = ExitCode.FAILED,
        when = "a backfill or reconciliation failed (stderr names the step and the day; later days not run), or the"
                + " command itself (e.g. the database for --since unreachable)")
@ExitsWith(
        code = ExitCode.BEYOND_TOLERANCE,
        when = "reconciled and corrected, but some day is beyond tolerance (alert)")
@ExitsWith(
        code = ExitCode.REFUSED,
        when = "the backfill refused the day: it reaches beyond the lake's completeness boundary (stream behind, retry"
                + " later), or a lake hour of it holds fewer rows than the stream archived into it (files lost); or"
                + " reconcile refused it: no succeeded batch run covers the day")
@ExitsWith(
        code = ExitCode.BUSY,
        when = "an overlapping backfill held the day's lock longer than batch.lock-timeout; retry later")
@ExitsWith(code = ExitCode.PARTLY, when = "compaction failed; every day reconciled within tolerance")
public final class NightlyCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--date",
            paramLabel = "D",
            description = "One day, e.g. 2026-11-28 (default: yesterday in time-zone).")
    String date;

    @Option(
            names = "--since",
            paramLabel = "DATE|Nd",
            converter = SinceConverter.class,
            description =
                    "Catch up: every day from D to yesterday without a" + " succeeded reconciliation, oldest first.")
    Since since;

    @CommandLine.Mixin
    StepOptions options = new StepOptions();

    private final OperationsEnvironment env;
    private NightlySteps steps;

    public NightlyCommand(OperationsEnvironment env) {
        this.env = env;
    }

    /** Runs these steps instead of the real ones (unit tests). */
    NightlyCommand withSteps(NightlySteps scripted) {
        this.steps = scripted;
        return this;
    }

    @Override
    public Integer call() throws Exception {
        CommandLine cmd = spec.commandLine();
        if (date != null && since != null)
            throw new CommandLine.ParameterException(cmd, "give --date or --since, not both");
        LocalDate day = parseDate(cmd, "--date", date);
        RecountConfig config = env.config(cmd, options.configFile);
        LocalDate today = LocalDate.now(env.clock().withZone(config.timeZone()));
        LocalDate yesterday = today.minusDays(1);
        LocalDate first = since == null ? null : since.first(today);
        if (first != null && first.isAfter(yesterday)) {
            throw new CommandLine.ParameterException(
                    cmd,
                    "--since " + first + " is after yesterday (" + yesterday + " in time-zone " + config.timeZone()
                            + ")");
        }
        PrintWriter out = options.out(cmd.getOut());
        NightlySteps run = steps != null ? steps : new InProcessSteps(env, config, options, out, cmd.getErr());
        List<LocalDate> days = first != null ? run.pending(first, yesterday) : List.of(day != null ? day : yesterday);
        ArrayNode record = JsonOutput.object().arrayNode();
        int code;
        if (days.isEmpty()) {
            say(out, "nothing to catch up since " + first);
            code = ExitCode.OK.code();
        } else {
            code = runDays(run, days, out, cmd.getErr(), record);
        }
        if (options.json.enabled() && code != ExitCode.FAILED.code()) {
            ObjectNode o = JsonOutput.object();
            o.set("dates", record);
            o.put("exit_code", code).put("outcome", ExitCode.of(code).label());
            JsonOutput.print(cmd.getOut(), o);
        }
        return code;
    }

    /** The steps for each day, oldest first; stops at the first failed backfill or reconciliation. */
    static int runDays(NightlySteps run, List<LocalDate> days, PrintWriter out, PrintWriter err, ArrayNode record) {
        Outcome outcome = new Outcome();
        for (LocalDate d : days) {
            say(out, d + ": backfill");
            ObjectNode day = record.addObject().put("date", d.toString());
            int backfill = Outcome.ofBackfill(run.backfill(d));
            day.put("backfill", backfill);
            if (backfill != ExitCode.OK.code()) {
                say(err, d + ": backfill did not succeed (exit " + backfill + "); later days not run");
                return backfill;
            }
            say(out, d + ": compact");
            int compact = run.compact(d);
            day.put("compact", compact);
            outcome.compacted(compact);
            if (compact != 0) {
                say(
                        err,
                        d
                                + ": compaction failed; the lake keeps its small files, results are not affected; continuing");
            }
            say(out, d + ": reconcile");
            int reconcile = Outcome.ofReconcile(run.reconcile(d));
            day.put("reconcile", reconcile);
            if (outcome.reconciled(reconcile)) {
                say(err, d + ": reconcile did not succeed (exit " + reconcile + "); later days not run");
                return reconcile;
            }
            if (reconcile == ExitCode.BEYOND_TOLERANCE.code())
                say(err, d + ": beyond tolerance (see the report); continuing");
        }
        return outcome.finished();
    }

    private static LocalDate parseDate(CommandLine cmd, String option, String value) {
        if (value == null) return null;
        try {
            return Instants.parseDate(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, option + ": " + e.getMessage(), e);
        }
    }

    private static void say(PrintWriter w, String line) {
        w.println("recount nightly: " + line);
        w.flush();
    }
}
