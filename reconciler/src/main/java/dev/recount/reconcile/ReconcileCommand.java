package dev.recount.reconcile;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.ExitsWith;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.cli.Progress;
import dev.recount.core.cli.RecountCli;
import dev.recount.core.config.Instants;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.reconcile.report.Labels;
import dev.recount.reconcile.report.Money;
import dev.recount.reconcile.report.ReportData;
import dev.recount.reconcile.report.ReportWriter;
import java.io.PrintWriter;
import java.math.BigInteger;
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
            "Compares what the streaming job wrote with what the batch layer recomputed, for every metric set of"
                    + " metric-sets.file (or --set NAME), makes the batch values final in each set's window_metrics"
                    + " (source=batch, is_final=true), appends every changed value to the set's correction log, and writes"
                    + " report.html, one diffs file per set (diffs.csv for the default set) and summary.json.",
            "Give exactly one of: --from/--to, --date, --batch-run. The range must be covered by a succeeded batch run of"
                    + " each set; a set it is not covered for is left out and named (exit 4), the others are reconciled.",
            "A key's measure is within tolerance when |stream - batch| <= absolute OR <= relative * |batch| (the set's"
                    + " tolerance; the default set's: reconcile.tolerance.<metric>.relative/.absolute; a missing side"
                    + " counts as 0).",
            "--dry-run compares and writes the report with the corrections it would make, but applies nothing:"
                    + " window_metrics, window_corrections and the correction log stay as they are.",
            "A run whose process died (killed, out of memory) stays 'running' until the next run marks it failed"
                    + " ('abandoned: ...'); its transaction never committed, so it changed nothing."
        })
@ExitsWith(
        code = ExitCode.BEYOND_TOLERANCE,
        when = "reconciled and corrected, but some key is beyond tolerance (alert; with --dry-run: nothing applied)")
@ExitsWith(
        code = ExitCode.REFUSED,
        when = "no succeeded batch run covers the range yet for a metric set (run the backfill, then retry; any other"
                + " set was reconciled), or stream and batch rows in it have different window sizes")
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
            names = "--set",
            paramLabel = "NAME",
            description = "Reconcile only this metric set of metric-sets.file (default: every set).")
    String set;

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
            MetricSets sets = MetricSets.fromConfig(config);
            if (set != null) sets = sets.only(set);
            settings = new Reconciler.Settings(
                    config.timeZone(),
                    sets,
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
            try (RunProgress progress = RunProgress.of(Progress.forCommand(spec, json.enabled()))) {
                r = new Reconciler(pool, settings, env.clock())
                        .withProgress(progress)
                        .reconcile(scope, dryRun ? Reconciler.Mode.DRY_RUN : Reconciler.Mode.APPLY);
            }
            if (json.enabled()) JsonOutput.print(cmd.getOut(), RunResultJson.of(r));
            else print(cmd.getOut(), r);
            for (String why : r.notCovered().values()) {
                cmd.getErr().println(RecountCli.path(spec) + ": refused: " + why);
            }
            cmd.getErr().flush();
            return exitCode(r);
        }
    }

    /**
     * Beyond tolerance (an alert: corrections were applied) before a set left out for want of a backfill (run it,
     * retry), before within tolerance: `reconcile pending` counts the days the same way.
     */
    static int exitCode(RunResult r) {
        if (r.verdict() == Verdict.BEYOND_TOLERANCE) return ExitCode.BEYOND_TOLERANCE.code();
        if (!r.notCovered().isEmpty()) return ExitCode.REFUSED.code();
        return ExitCode.OK.code();
    }

    /**
     * The run's summary. A run of the default set alone prints as before metric sets; otherwise each set gets its
     * lines under its name, and each set not covered its reason.
     */
    private static void print(PrintWriter out, RunResult r) {
        out.printf(
                "reconcile run %d (%s [%s, %s)): %s%s%n",
                r.runId(),
                r.scope().label(),
                r.scope().from(),
                r.scope().to(),
                verdict(r.verdict()),
                r.dryRun() ? " (DRY RUN: nothing applied)" : "");
        boolean perSet = ReportData.perSet(
                r.sets().stream().map(SetResult::set).toList(), r.notCovered().keySet());
        for (SetResult s : r.sets()) {
            String indent = "  ";
            if (perSet) {
                out.printf("  set %s: %s%n", s.name(), verdict(s.verdict()));
                indent = "    ";
            }
            printSet(out, indent, r.dryRun(), s);
        }
        r.notCovered().forEach((set, why) -> out.printf("  set %s: NOT RECONCILED: %s%n", set, why));
        out.printf("  report: %s%n", r.reportDir().resolve(ReportWriter.HTML));
        out.flush();
    }

    private static String verdict(Verdict v) {
        return v == Verdict.WITHIN_TOLERANCE ? "WITHIN TOLERANCE" : "BEYOND TOLERANCE";
    }

    /** One set's lines: its keys, its lead measure (the default set's spend) and events, its corrections. */
    private static void printSet(PrintWriter out, String indent, boolean dryRun, SetResult r) {
        KeyCounts k = r.comparison().range().counts();
        GroupTotals t = r.comparison().range();
        out.printf(
                "%skeys %d: %d match, %d mismatch, %d missing in stream, %d missing in batch; %d beyond tolerance%n",
                indent,
                k.compared(),
                k.matched(),
                k.mismatched(),
                k.missingInStream(),
                k.missingInBatch(),
                k.beyondTolerance());
        int lead = Labels.lead(r.set());
        Measure m = r.set().measures().get(lead);
        out.printf(
                "%s%s stream %s, batch %s, final%s %s (stream - batch %s)%n",
                indent,
                Labels.label(m).toLowerCase(java.util.Locale.ROOT),
                value(m, t.stream().get(lead)),
                value(m, t.batch().get(lead)),
                dryRun ? " if applied" : "",
                value(m, r.finalTotals().get(lead)),
                value(m, t.difference(lead)));
        int events = r.set().eventsIndex();
        if (events != lead) {
            out.printf(
                    "%sevents stream %d, batch %d, final %d%n",
                    indent,
                    t.stream().get(events),
                    t.batch().get(events),
                    r.finalTotals().get(events));
        }
        if (dryRun) {
            out.printf(
                    "%swould correct: %d keys to finalize or change, %d values to change %s (nothing applied)%n",
                    indent, r.keysFinalized(), r.valuesCorrected(), r.corrections());
        } else {
            out.printf(
                    "%scorrections: %d keys finalized or changed, %d values changed %s%n",
                    indent, r.keysFinalized(), r.valuesCorrected(), r.corrections());
        }
    }

    private static String value(Measure m, BigInteger v) {
        return Labels.isMoney(m) ? Money.grouped(v) : v.toString();
    }
}
