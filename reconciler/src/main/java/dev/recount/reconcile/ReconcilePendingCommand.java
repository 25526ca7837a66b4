package dev.recount.reconcile;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.cli.Converters.DaysBackConverter;
import dev.recount.core.cli.Converters.SinceConverter;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.ExitsWith;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.cli.OldName;
import dev.recount.core.cli.Since;
import dev.recount.core.cli.WaitOption;
import dev.recount.core.cli.WaitsFor;
import dev.recount.core.config.Durations;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.time.ProcessClock;
import dev.recount.core.time.Wait;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code reconcile pending}: the nightly reconciliation of a cluster deployment, where the backfill runs on its own
 * schedule (the Spark Operator): every day of the last N that no succeeded reconciliation covers, oldest first.
 */
@Command(
        name = "pending",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Reconciles, oldest first, every day from --since (up to yesterday in the configured time-zone) that no"
                    + " succeeded reconciliation covers yet for some metric set, as `reconcile --date D` does. For a cluster whose"
                    + " backfill runs on its own schedule (`nightly` runs backfill and reconcile together).",
            "If the newest day has no succeeded backfill yet for some set (reconcile exit 4), retries every 5 minutes for up to"
                    + " --wait. A failed day stops the run. With $RECOUNT_PUSHGATEWAY_URL set, pushes the"
                    + " outcome as recount_reconcile_* metrics (job recount_reconcile)."
        })
// Its own list (--help shows it instead of reconcile's): what a whole catch-up run means.
@ExitsWith(code = ExitCode.OK, when = "every pending day reconciled within tolerance (or none pending)")
@ExitsWith(code = ExitCode.FAILED, when = "a day's reconciliation failed; later days not run")
@ExitsWith(code = ExitCode.BEYOND_TOLERANCE, when = "some day beyond tolerance (corrections applied; alert)")
@ExitsWith(
        code = ExitCode.REFUSED,
        when = "some day still without a succeeded backfill (run: recount backfill nightly --date D)")
@WaitsFor(value = "the newest day's backfill to succeed, retrying every 5 minutes", byDefault = "0s")
@OldName(
        name = "--days",
        now = "--since",
        converter = DaysBackConverter.class,
        paramLabel = "N",
        means = "--days N is --since Nd")
@OldName(name = "--wait-for-backfill", now = "--wait")
public final class ReconcilePendingCommand implements Callable<Integer> {
    /** How long to wait between two tries of a day whose backfill has not succeeded yet. */
    static final Duration RETRY_EVERY = Duration.ofMinutes(5);

    /** Waits between retries; the real one sleeps (a scheduled job's pause, not a test's synchronisation). */
    interface Pause {
        void pause(Duration d) throws InterruptedException;
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--since",
            paramLabel = "DATE|Nd",
            defaultValue = "7d",
            converter = SinceConverter.class,
            description = "The first day to look at: a date, e.g. 2026-11-20, or a number of days back, e.g. 7d"
                    + " (default: ${DEFAULT-VALUE}).")
    Since since;

    @Mixin
    WaitOption waitOption;

    @Mixin
    JsonOutput json;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file (default: $RECOUNT_CONFIG, else built-in defaults).")
    Path configFile;

    @Option(
            names = "--report-dir",
            paramLabel = "DIR",
            description = "Where the reports go (default: reconcile.report-dir).")
    Path reportDir;

    private final CommandEnvironment env;
    private final Pause pause;
    /** Where the run's text goes: stdout, or nowhere with --json. */
    private PrintWriter out;
    /** Each reconciled day's outcome, for --json. */
    private final ArrayNode days = JsonOutput.object().arrayNode();

    private LocalDate firstDay;
    private LocalDate lastDay;

    public ReconcilePendingCommand(CommandEnvironment env) {
        this(env, d -> Thread.sleep(d.toMillis()));
    }

    ReconcilePendingCommand(CommandEnvironment env, Pause pause) {
        this.env = env;
        this.pause = pause;
    }

    @Override
    public Integer call() throws Exception {
        CommandLine cmd = spec.commandLine();
        Duration wait = waitOption.duration();
        RecountConfig config = env.config(cmd, configFile);
        ZoneId zone = config.timeZone();
        LocalDate yesterday = LocalDate.now(env.clock().withZone(zone)).minusDays(1);
        LocalDate since = this.since.first(LocalDate.now(env.clock().withZone(ZoneOffset.UTC)));
        MetricSets sets;
        try {
            sets = MetricSets.fromConfig(config);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage(), e);
        }
        List<LocalDate> pending;
        try (HikariDataSource pool = CommandEnvironment.pool(config);
                Connection conn = pool.getConnection()) {
            pending = NightlyDates.pending(conn, since, yesterday, zone, sets);
        } catch (Exception e) {
            say(cmd.getErr(), "cannot list the pending days: " + Reconciler.oneLine(e));
            return finish(ExitCode.FAILED.code(), 0, 0, 0);
        }
        // With --json, stdout is the one object finish() prints: the days' own reports stay off it.
        out = json.enabled() ? new PrintWriter(Writer.nullWriter()) : cmd.getOut();
        firstDay = since;
        lastDay = yesterday;
        if (pending.isEmpty()) say(out, "nothing to do since " + since);
        int reconciled = 0;
        int beyond = 0;
        int notCovered = 0;
        LocalDate newest = pending.isEmpty() ? null : pending.get(pending.size() - 1);
        for (LocalDate d : pending) {
            // Only the newest day is worth waiting for: an older day without a backfill was missed, not late.
            int rc = Wait.upTo(d.equals(newest) ? wait : Duration.ZERO)
                    .every(RETRY_EVERY)
                    .on(clock())
                    .retry(
                            () -> {
                                say(out, d + ": reconcile");
                                return reconcileDay(d);
                            },
                            code -> code != ExitCode.REFUSED.code(),
                            (code, next) -> say(
                                    cmd.getErr(),
                                    d + ": no succeeded backfill covers it yet; retrying in "
                                            + Durations.format(next)));
            days.addObject()
                    .put("date", d.toString())
                    .put("exit_code", rc)
                    .put("outcome", ExitCode.of(rc).label());
            switch (ExitCode.of(rc)) {
                case OK -> reconciled++;
                case BEYOND_TOLERANCE -> {
                    reconciled++;
                    beyond++;
                    say(cmd.getErr(), d + ": beyond tolerance (corrections applied; see the report)");
                }
                case REFUSED -> {
                    notCovered++;
                    say(
                            cmd.getErr(),
                            d + ": not reconciled: no succeeded backfill covers it for some metric set (named"
                                    + " above; run: recount backfill nightly --date " + d + ")");
                }
                default -> {
                    say(cmd.getErr(), d + ": reconcile failed (exit " + rc + "); later days not run");
                    return finish(rc, reconciled, beyond, notCovered);
                }
            }
        }
        int code = beyond > 0
                ? ExitCode.BEYOND_TOLERANCE.code()
                : notCovered > 0 ? ExitCode.REFUSED.code() : ExitCode.OK.code();
        return finish(code, reconciled, beyond, notCovered);
    }

    /** The command's clock for its waiting: the environment's time, and its pause (tests pass their own). */
    private ProcessClock clock() {
        return new ProcessClock() {
            @Override
            public long nanoTime() {
                return TimeUnit.MILLISECONDS.toNanos(env.clock().millis());
            }

            @Override
            public void pause(Duration d) throws InterruptedException {
                pause.pause(d);
            }
        };
    }

    private int reconcileDay(LocalDate day) {
        List<String> args = new ArrayList<>(List.of("--date", day.toString()));
        if (configFile != null) args.addAll(List.of("--config", configFile.toString()));
        if (reportDir != null) args.addAll(List.of("--report-dir", reportDir.toString()));
        CommandLine cmd = spec.commandLine();
        return ReconcileMain.execute(env, out, cmd.getErr(), args.toArray(String[]::new));
    }

    private int finish(int code, int reconciled, int beyond, int notCovered) {
        String failed = new PendingMetrics(
                        code, reconciled, beyond, notCovered, env.clock().instant())
                .gauges()
                .pushIfConfigured(env.variables());
        if (failed != null) say(spec.commandLine().getErr(), failed);
        if (json.enabled() && code != ExitCode.FAILED.code()) {
            ObjectNode o = JsonOutput.object();
            o.put("since", String.valueOf(firstDay)).put("until", String.valueOf(lastDay));
            o.set("days", days);
            o.put("reconciled", reconciled).put("beyond_tolerance", beyond).put("not_covered", notCovered);
            o.put("exit_code", code);
            JsonOutput.print(spec.commandLine().getOut(), o);
        }
        return code;
    }

    private static void say(PrintWriter w, String line) {
        w.println("reconcile pending: " + line);
        w.flush();
    }
}
