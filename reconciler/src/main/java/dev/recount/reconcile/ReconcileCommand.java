package dev.recount.reconcile;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.config.Instants;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.metrics.Metric;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.report.Money;
import dev.recount.reconcile.report.ReportWriter;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code reconcile}: diff stream vs batch for a range, a date or a batch run; correct; report. */
@Command(
        name = "reconcile",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        subcommands = {NightlyDatesCommand.class, ReconcilePendingCommand.class},
        description = {
            "Compares what the streaming job wrote with what the batch layer recomputed, makes the batch values final"
                    + " in window_metrics (source=batch, is_final=true), appends every changed value to the correction log,"
                    + " and writes report.html, diffs.csv and summary.json.",
            "Give exactly one of: --from/--to, --date, --batch-run. The range must be covered by a succeeded batch run.",
            "A key's metric is within tolerance when |stream - batch| <= absolute OR <= relative * |batch|"
                    + " (reconcile.tolerance.<metric>.relative/.absolute; a missing side counts as 0).",
            "--dry-run compares and writes the report with the corrections it would make, but applies nothing:"
                    + " window_metrics, window_corrections and the correction log stay as they are.",
            "A run whose process died (killed, out of memory) stays 'running' until the next run marks it failed"
                    + " ('abandoned: ...'); its transaction never committed, so it changed nothing."
        })
public final class ReconcileCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--from",
            paramLabel = "T",
            description = "Start of the range (inclusive), e.g. 2026-11-28T00:00:00Z.")
    String from;

    @Option(names = "--to", paramLabel = "T", description = "End of the range (exclusive).")
    String to;

    @Option(
            names = "--date",
            paramLabel = "D",
            description = "One day, midnight to midnight in the configured time-zone, e.g. 2026-11-28.")
    String date;

    @Option(names = "--batch-run", paramLabel = "ID", description = "The windows of one succeeded batch run.")
    Long batchRun;

    @Option(
            names = "--report-dir",
            paramLabel = "DIR",
            description = "Where run-<id>-<from>/ is written (default: reconcile.report-dir, .recount/reports).")
    Path reportDir;

    @Option(
            names = "--dry-run",
            description = "Compare and report what would be corrected; apply nothing (the run is"
                    + " recorded with dry_run = true).")
    boolean dryRun;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file (default: $RECOUNT_CONFIG, else built-in defaults).")
    Path configFile;

    @Mixin
    JsonOutput json;

    private final CommandEnvironment env;

    public ReconcileCommand(CommandEnvironment env) {
        this.env = env;
    }

    @Override
    public Integer call() throws Exception {
        CommandLine cmd = spec.commandLine();
        int forms = (from != null || to != null ? 1 : 0) + (date != null ? 1 : 0) + (batchRun != null ? 1 : 0);
        if (forms != 1) {
            throw new CommandLine.ParameterException(
                    cmd,
                    forms == 0
                            ? "give the range to reconcile: --from T --to T, --date D or --batch-run ID"
                            : "give only one of --from/--to, --date and --batch-run");
        }
        if ((from == null) != (to == null))
            throw new CommandLine.ParameterException(cmd, "--from and --to go together");
        RecountConfig config = env.config(cmd, configFile);
        if (reportDir != null) config = config.with("reconcile.report-dir", reportDir.toString());
        Reconciler.Settings settings;
        Scope scope = null;
        try {
            settings = new Reconciler.Settings(
                    config.timeZone(),
                    Tolerances.fromConfig(config),
                    Path.of(config.get("reconcile.report-dir")),
                    config.get("reconcile.work-mem"));
            if (from != null) scope = ScopeResolver.range(Instants.parseInstant(from), Instants.parseInstant(to));
            if (date != null) scope = ScopeResolver.date(Instants.parseDate(date), settings.zone());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage(), e);
        }
        try (HikariDataSource pool = CommandEnvironment.pool(config)) {
            if (scope == null) {
                try (Connection conn = pool.getConnection()) {
                    scope = ScopeResolver.batchRun(conn, batchRun);
                }
            }
            RunResult r;
            try (RunProgress progress =
                    RunProgress.forCommand(RunProgress.onTerminal(), json.enabled(), System.err, cmd.getErr())) {
                r = new Reconciler(pool, settings, env.clock())
                        .withProgress(progress)
                        .reconcile(scope, dryRun ? Reconciler.Mode.DRY_RUN : Reconciler.Mode.APPLY);
            }
            if (json.enabled()) JsonOutput.print(cmd.getOut(), RunResultJson.of(r));
            else print(cmd.getOut(), r);
            return r.verdict() == Verdict.WITHIN_TOLERANCE ? ExitCodes.WITHIN_TOLERANCE : ExitCodes.BEYOND_TOLERANCE;
        }
    }

    private static void print(PrintWriter out, RunResult r) {
        KeyCounts k = r.comparison().range().counts();
        GroupTotals t = r.comparison().range();
        out.printf(
                "reconcile run %d (%s [%s, %s)): %s%s%n",
                r.runId(),
                r.scope().label(),
                r.scope().from(),
                r.scope().to(),
                r.verdict() == Verdict.WITHIN_TOLERANCE ? "WITHIN TOLERANCE" : "BEYOND TOLERANCE",
                r.dryRun() ? " (DRY RUN: nothing applied)" : "");
        out.printf(
                "  keys %d: %d match, %d mismatch, %d missing in stream, %d missing in batch; %d beyond tolerance%n",
                k.compared(),
                k.matched(),
                k.mismatched(),
                k.missingInStream(),
                k.missingInBatch(),
                k.beyondTolerance());
        out.printf(
                "  spend stream %s, batch %s, final%s %s (stream - batch %s)%n",
                Money.grouped(t.stream().spendMicros()),
                Money.grouped(t.batch().spendMicros()),
                r.dryRun() ? " if applied" : "",
                Money.grouped(r.finalTotals().spendMicros()),
                Money.grouped(t.difference(Metric.SPEND_MICROS)));
        out.printf(
                "  events stream %d, batch %d, final %d%n",
                t.stream().events(), t.batch().events(), r.finalTotals().events());
        if (r.dryRun()) {
            out.printf(
                    "  would correct: %d keys to finalize or change, %d values to change %s (nothing applied)%n",
                    r.keysFinalized(), r.valuesCorrected(), r.corrections());
        } else {
            out.printf(
                    "  corrections: %d keys finalized or changed, %d values changed %s%n",
                    r.keysFinalized(), r.valuesCorrected(), r.corrections());
        }
        out.printf("  report: %s%n", r.reportDir().resolve(ReportWriter.HTML));
        out.flush();
    }
}
