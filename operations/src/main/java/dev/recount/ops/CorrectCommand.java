package dev.recount.ops;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.recount.batch.BackfillException;
import dev.recount.batch.BackfillRunner;
import dev.recount.batch.BackfillSettings;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.ExitsWith;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.cli.RecountCli;
import dev.recount.core.cli.WaitOption;
import dev.recount.core.cli.WaitsFor;
import dev.recount.core.config.Component;
import dev.recount.core.config.Durations;
import dev.recount.core.config.RecountConfig;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.db.tables.BackfillWaitingTable;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.reconcile.CommandEnvironment;
import dev.recount.reconcile.ReconcileMain;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code correct}: closes the late-data loop within minutes. Recomputes the windows the backfill topic names
 * ({@code backfill affected}), then reconciles exactly the windows that run recomputed ({@code reconcile --batch-run ID}),
 * which makes them final in window_metrics. Meant to run every few minutes; never two at once ({@link CorrectLock}).
 */
@Command(
        name = "correct",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Recomputes from the lake the windows named by the backfill topic (too-late events) since the last run,"
                    + " as `backfill affected` does, then reconciles exactly the windows that run recomputed, as"
                    + " `reconcile --batch-run ID` does: they become final (source batch) with the late events counted.",
            "Run it every few minutes from a scheduler. Two runs never overlap: a PostgreSQL advisory lock per schema;"
                    + " a second run exits 5 (busy) at once (or waits up to --wait). With nothing new on the topic and no"
                    + " waiting record settled (backfill_waiting) it reconciles nothing and exits 0.",
            "With $RECOUNT_PUSHGATEWAY_URL set, every run pushes recount_correct_* metrics (job recount_correct) for"
                    + " the alerts."
        })
@ExitsWith(code = ExitCode.OK, when = "corrected within tolerance, or nothing new to correct")
@ExitsWith(
        code = ExitCode.FAILED,
        when = "the affected backfill failed (offsets not committed: the next run retries), or the reconciliation"
                + " failed (the recomputed windows stay unreconciled; run nightly or reconcile --batch-run), or the"
                + " command itself (e.g. the database unreachable for the lock)")
@ExitsWith(code = ExitCode.BEYOND_TOLERANCE, when = "corrected, but some key was beyond tolerance (alert)")
@ExitsWith(code = ExitCode.REFUSED, when = "reconcile refused: the run's windows have no batch rows (rewritten since)")
@ExitsWith(
        code = ExitCode.BUSY,
        when = "another correct run holds the lock (and --wait ran out), or an overlapping backfill held the windows"
                + " longer than batch.lock-timeout: nothing was run")
@WaitsFor(value = "a running correct to finish before exiting 5 (busy)", byDefault = "0s")
public final class CorrectCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    StepOptions options = new StepOptions();

    @CommandLine.Mixin
    WaitOption wait;

    @Option(
            names = "--max-records",
            paramLabel = "N",
            defaultValue = "500000",
            description = "Read at most about N backfill records per run, and check at most N waiting ones (default:"
                    + " ${DEFAULT-VALUE}).")
    int maxRecords;

    private final OperationsEnvironment env;

    public CorrectCommand(OperationsEnvironment env) {
        this.env = env;
    }

    /** The windows this run recomputed and reconciled, for {@link CorrectMetrics}. */
    private int windowsCorrected;

    /** What waits after this run's backfill, for {@link CorrectMetrics}; null until it has run. */
    private BackfillWaitingTable.Summary waiting;

    /** The backfill records this run skipped as malformed, for {@link CorrectMetrics}. */
    private int malformed;

    @Override
    public Integer call() throws Exception {
        // Every outcome is pushed, a usage error or an exception too (exit 2 or 1, as the command line reports
        // them), so that a run that keeps failing stops recording successes.
        int code = ExitCode.FAILED.code();
        try {
            code = correct();
            if (options.json.enabled()) {
                ObjectNode o = JsonOutput.object();
                o.put("windows_corrected", windowsCorrected).put("malformed", malformed);
                if (waiting != null) o.put("waiting", waiting.records());
                o.put("exit_code", code).put("outcome", ExitCode.of(code).label());
                JsonOutput.print(spec.commandLine().getOut(), o);
            }
            return code;
        } catch (CommandLine.ParameterException e) {
            code = ExitCode.USAGE.code();
            throw e;
        } finally {
            String failed = new CorrectMetrics(
                            code,
                            windowsCorrected,
                            waiting,
                            malformed,
                            env.clock().instant())
                    .gauges()
                    .pushIfConfigured(env.variables());
            if (failed != null) say(spec.commandLine().getErr(), failed);
        }
    }

    private int correct() throws Exception {
        CommandLine cmd = spec.commandLine();
        PrintWriter out = options.out(cmd.getOut());
        PrintWriter err = cmd.getErr();
        RecountConfig config = env.config(cmd, options.configFile).with("lake.path", options.lake);
        Duration wait = this.wait.duration();
        BackfillSettings settings;
        String batchPassword;
        try {
            if (maxRecords < 1) throw new IllegalArgumentException("--max-records must be at least 1");
            settings = BackfillSettings.from(config);
            batchPassword = config.password(Component.BATCH);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage(), e);
        }
        try (HikariDataSource reconcilerDb = Database.pool(
                        config.postgres(Component.RECONCILER), config.password(Component.RECONCILER), Role.RECONCILER);
                CorrectLock lock = CorrectLock.acquire(
                        reconcilerDb, config.postgres(Component.RECONCILER).schema(), wait)) {
            if (lock == null) {
                say(
                        err,
                        "another correct run holds the lock"
                                + (wait.isZero() ? "" : " (waited " + Durations.format(wait) + ")")
                                + "; nothing was run");
                return ExitCode.BUSY.code();
            }
            int leftOver = reconcileLeftOver(reconcilerDb, settings, out, err);
            return Outcome.worse(leftOver, correctNew(settings, batchPassword, out, err));
        }
    }

    /** Recomputes the windows the backfill topic names since the last run, then reconciles exactly those. */
    private int correctNew(BackfillSettings settings, String batchPassword, PrintWriter out, PrintWriter err) {
        BackfillRunner.AffectedReport report;
        try {
            report = recomputeAffected(settings, batchPassword);
        } catch (BackfillException e) {
            say(err, "backfill affected: " + RecountCli.reason(e));
            return Outcome.ofBackfill(e.exitCode().code());
        } catch (Exception e) {
            say(err, "backfill affected failed: " + RecountCli.reason(e));
            return ExitCode.FAILED.code();
        }
        waiting = report.waiting();
        malformed = report.malformed();
        say(out, report.summary());
        if (report.windows().isEmpty()) {
            say(out, "nothing new to correct");
            return ExitCode.OK.code();
        }
        say(out, "reconciling the " + report.windows().size() + " windows of batch run " + report.runId());
        int reconciled = Outcome.ofReconcile(reconcile(report.runId(), out, err));
        if (reconciled == ExitCode.OK.code() || reconciled == ExitCode.BEYOND_TOLERANCE.code()) {
            windowsCorrected = report.windows().size();
        }
        return reconciled;
    }

    /**
     * First the windows an earlier `affected` run recomputed but nothing reconciled: `correct` killed between its
     * two steps (a node drained, a kill -9), a reconcile that failed, or `backfill affected` run by hand. Their
     * backfill records are acknowledged, so no later run would name those windows again, and nightly reconciles only
     * yesterday: the late events would never reach window_metrics. Runs older than validation.max-past + 1d are
     * left (by then their failure has alerted for a week); at most 20 per run, so a backlog drains over a few runs.
     *
     * @return the mapped code of the worst of those reconciliations, OK when there was none
     */
    private int reconcileLeftOver(HikariDataSource db, BackfillSettings settings, PrintWriter out, PrintWriter err)
            throws java.sql.SQLException {
        List<Long> runs;
        try (java.sql.Connection c = db.getConnection()) {
            runs = ReconciliationRunsTable.unreconciledAffectedRuns(
                    c, settings.maxPast().plusDays(1).toMillis(), 20);
        }
        int worst = ExitCode.OK.code();
        for (long runId : runs) {
            say(out, "reconciling the windows of batch run " + runId + ", recomputed earlier but never reconciled");
            worst = Outcome.worse(worst, Outcome.ofReconcile(reconcile(runId, out, err)));
        }
        return worst;
    }

    private BackfillRunner.AffectedReport recomputeAffected(BackfillSettings settings, String password)
            throws Exception {
        try (HikariDataSource batchDb = Database.pool(settings.postgres(), password, Role.BATCH)) {
            SparkSession spark = env.sparkSessions().open(settings, options.master);
            try {
                return new BackfillRunner(
                                spark,
                                batchDb,
                                settings,
                                password,
                                BackfillRunner.DEFAULT_DRIVER_MAX_ROWS,
                                Duration.ofSeconds(10))
                        // Backfill records deleted before they were read fail it, every time: going on without them
                        // is for a person to decide, once, with `backfill affected --skip-deleted-input`.
                        .recomputeAffected(options.force, maxRecords, false);
            } finally {
                env.sparkSessions().release(spark);
            }
        }
    }

    /** The reconciler's own command on exactly the windows of the batch run (its --batch-run form). */
    private int reconcile(long batchRunId, PrintWriter out, PrintWriter err) {
        List<String> args = new ArrayList<>(List.of("--batch-run", Long.toString(batchRunId)));
        if (options.configFile != null) args.addAll(List.of("--config", options.configFile.toString()));
        if (options.reportDir != null) args.addAll(List.of("--report-dir", options.reportDir.toString()));
        return ReconcileMain.execute(
                new CommandEnvironment(env.variables(), env.clock()), out, err, args.toArray(String[]::new));
    }

    private static void say(PrintWriter w, String line) {
        w.println("recount correct: " + line);
        w.flush();
    }
}
