package dev.recount.batch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.cli.Converters.DateConverter;
import dev.recount.core.cli.Converters.InstantConverter;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.cli.Pushgateway;
import dev.recount.core.cli.RecountCli;
import dev.recount.core.config.Component;
import dev.recount.core.config.Durations;
import dev.recount.core.config.RecountConfig;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.db.tables.BatchRunsTable.Mode;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.IntFunction;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code ./recount backfill range|affected|nightly}: recompute window metrics exactly from the raw event lake
 * (docs/contract.md). Also the main class of the spark-submit application jar. Exit codes: {@link ExitCodes}.
 */
@Command(
        name = "backfill",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        subcommands = {
            BackfillMain.RangeCommand.class,
            BackfillMain.AffectedCommand.class,
            BackfillMain.NightlyCommand.class,
            BackfillMain.CompactCommand.class
        },
        description = {
            "Recompute window metrics exactly from the raw event lake with Spark;",
            "compact the lake's small files and apply lake.retention."
        })
public final class BackfillMain implements Callable<Integer> {
    private final Map<String, String> environment;
    private final Clock clock;
    private final SparkSessions sparkSessions;
    private final long driverMaxRows;

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
        return RecountCli.configure(new CommandLine(main))
                .exitCodes(ExitCodes.class)
                .failureCodes(ex -> ex instanceof BackfillException b ? b.exitCode() : ExitCodes.FAILED)
                .commandLine();
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(
                spec.commandLine(), "missing command: range, affected, nightly or compact");
    }

    /** Options every subcommand takes. */
    static final class CommonOptions {
        @Option(
                names = "--config",
                paramLabel = "FILE",
                description = "Settings file (default: $RECOUNT_CONFIG; see config/recount.properties).")
        Path config;

        @Option(names = "--lake", paramLabel = "PATH", description = "Raw event lake: directory or URI (lake.path).")
        String lake;

        @Option(
                names = "--master",
                paramLabel = "URL",
                description = "Spark master, e.g. local[4] (default: spark-submit's, else batch.spark-master).")
        String master;

        @Option(
                names = "--progress-every",
                paramLabel = "DURATION",
                defaultValue = "10s",
                description = "How often a long run logs its Spark progress (default: ${DEFAULT-VALUE}).")
        String progressEvery;
    }

    /** What a subcommand needs: settings read, arguments checked, then Spark and the database opened. */
    private abstract static class BackfillCommand implements Callable<Integer> {
        @ParentCommand
        BackfillMain main;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Mixin
        CommonOptions common;

        @Mixin
        JsonOutput json;

        interface Work {
            void run(BackfillRunner runner, BackfillSettings settings) throws Exception;
        }

        private RecountConfig config;

        BackfillSettings settings() {
            try {
                Path file = common.config;
                String fromEnv = main.environment.get("RECOUNT_CONFIG");
                if (file == null && fromEnv != null && !fromEnv.isBlank()) file = Path.of(fromEnv);
                config = RecountConfig.load(file, main.environment).with("lake.path", common.lake);
                return BackfillSettings.from(config);
            } catch (IllegalArgumentException e) {
                throw BackfillException.badArguments(e.getMessage());
            }
        }

        int withRunner(BackfillSettings settings, Work work) throws Exception {
            return withSpark(settings, (spark, db, password, progress) -> {
                work.run(new BackfillRunner(spark, db, settings, password, main.driverMaxRows, progress), settings);
                return ExitCodes.OK;
            });
        }

        interface SparkWork {
            int run(SparkSession spark, HikariDataSource db, String password, Duration progress) throws Exception;
        }

        /** Opens the database pool (role recount_batch) and the Spark session, runs {@code work}, closes both. */
        int withSpark(BackfillSettings settings, SparkWork work) throws Exception {
            Duration progress;
            String password;
            try {
                progress = Durations.parse(common.progressEvery);
                password = config.password(Component.BATCH);
            } catch (IllegalArgumentException e) {
                throw BackfillException.badArguments(e.getMessage());
            }
            try (HikariDataSource db = Database.pool(settings.postgres(), password, Role.BATCH)) {
                SparkSession spark = main.sparkSessions.open(settings, common.master);
                try {
                    return work.run(spark, db, password, progress);
                } finally {
                    main.sparkSessions.release(spark);
                }
            }
        }

        /**
         * Runs {@code run}, then pushes its outcome when {@value Pushgateway#URL_VARIABLE} is set, whatever it ends
         * with: an exception too, under the exit code the command line reports for it. A failed push is one line on
         * stderr and changes no exit code.
         */
        int pushingOutcome(Callable<Integer> run, IntFunction<Pushgateway> gauges) throws Exception {
            int code = ExitCodes.FAILED;
            try {
                code = run.call();
                return code;
            } catch (BackfillException e) {
                code = e.exitCode();
                throw e;
            } catch (CommandLine.ParameterException e) {
                code = ExitCodes.BAD_ARGUMENTS;
                throw e;
            } finally {
                String failed = gauges.apply(code).pushIfConfigured(main.environment);
                if (failed != null) spec.commandLine().getErr().println(RecountCli.path(spec) + ": " + failed);
            }
        }

        PrintWriter out() {
            return spec.commandLine().getOut();
        }

        /** Prints what the run did: its summary line, or with {@code --json} the one JSON object. */
        void report(String summary, ObjectNode asJson) {
            if (json.enabled()) JsonOutput.print(out(), asJson);
            else out().println(summary);
        }
    }

    @Command(
            name = "range",
            sortOptions = false,
            description = "Recompute every window in [from, to) from the lake and replace the batch result there.")
    static final class RangeCommand extends BackfillCommand {
        @Option(
                names = "--from",
                required = true,
                paramLabel = "INSTANT",
                converter = InstantConverter.class,
                description = "First window start, ISO-8601 UTC (e.g. 2026-11-29T00:00:00Z); window-aligned.")
        Instant from;

        @Option(
                names = "--to",
                required = true,
                paramLabel = "INSTANT",
                converter = InstantConverter.class,
                description = "End (exclusive), window-aligned; must not be beyond the lake's completeness boundary.")
        Instant to;

        @Option(
                names = "--force",
                description = "Recompute even beyond the lake's completeness boundary, or from lake hours holding"
                        + " fewer rows than the stream archived into them (recorded).")
        boolean force;

        @Override
        public Integer call() throws Exception {
            BackfillSettings settings = settings();
            TimeRange range = checkedRange(from, to, settings);
            return withRunner(settings, (runner, s) -> {
                BackfillRunner.RangeReport report = runner.recomputeRange(Mode.RANGE, range, force);
                report(report.summary(), report.json());
            });
        }
    }

    @Command(
            name = "affected",
            sortOptions = false,
            description = {
                "Recompute the windows named by the backfill topic (too-late events) since the last run.",
                "Offsets are committed only after results that include those events are committed; a record that"
                        + " cannot be settled yet (its event not visible in the lake, its window beyond the lake's"
                        + " completeness boundary) waits in the table backfill_waiting, checked again by every run."
            })
    static final class AffectedCommand extends BackfillCommand {
        @Option(
                names = "--force",
                description = "Also recompute windows beyond the lake's completeness boundary, or in lake hours"
                        + " holding fewer rows than the stream archived into them.")
        boolean force;

        @Option(
                names = "--max-records",
                paramLabel = "N",
                defaultValue = "500000",
                description =
                        "Read at most about N backfill records per run, and check at most N waiting ones (default:"
                                + " ${DEFAULT-VALUE}).")
        int maxRecords;

        @Option(
                names = "--skip-deleted-input",
                description = "Go on at the earliest offset still on the backfill topic where records this command"
                        + " had not read were deleted (its retention ran out first); without it such a run fails.")
        boolean skipDeletedInput;

        @Override
        public Integer call() throws Exception {
            BackfillSettings settings = settings();
            if (maxRecords < 1) throw BackfillException.badArguments("--max-records must be at least 1");
            return withRunner(settings, (runner, s) -> {
                BackfillRunner.AffectedReport report = runner.recomputeAffected(force, maxRecords, skipDeletedInput);
                report(report.summary(), report.json());
            });
        }
    }

    @Command(
            name = "nightly",
            sortOptions = false,
            description = {
                "Recompute the previous day (or --date) in the configured time-zone, then the affected" + " windows.",
                "The day is [midnight, next midnight) in time-zone: 23 or 25 hours on daylight"
                        + " saving days; a window belongs to the day its start falls in. Rerunning a date replaces the"
                        + " same rows."
            })
    static final class NightlyCommand extends BackfillCommand {
        @Option(
                names = "--date",
                paramLabel = "DATE",
                converter = DateConverter.class,
                description = "The day to recompute, e.g. 2026-11-28 (default: yesterday in time-zone).")
        LocalDate date;

        @Option(
                names = "--force",
                description = "Recompute even beyond the lake's completeness boundary, or from lake hours holding"
                        + " fewer rows than the stream archived into them (recorded).")
        boolean force;

        @Option(
                names = "--max-records",
                paramLabel = "N",
                defaultValue = "500000",
                description = "Read at most about N backfill records, and check at most N waiting ones (default:"
                        + " ${DEFAULT-VALUE}).")
        int maxRecords;

        @Option(
                names = "--skip-deleted-input",
                description = "Go on at the earliest offset still on the backfill topic where records this command"
                        + " had not read were deleted (its retention ran out first); without it such a run fails.")
        boolean skipDeletedInput;

        /** Pushes {@link ScheduledRunMetrics#nightly} after the run. */
        @Override
        public Integer call() throws Exception {
            return pushingOutcome(this::nightly, code -> ScheduledRunMetrics.nightly(code, main.clock.instant()));
        }

        private int nightly() throws Exception {
            BackfillSettings settings = settings();
            LocalDate day = date != null ? date : NightlyRange.previousDay(main.clock, settings.timeZone());
            TimeRange range;
            try {
                range = NightlyRange.forDate(day, settings.timeZone(), settings.windows());
            } catch (IllegalArgumentException e) {
                throw BackfillException.badArguments("nightly " + day + ": " + e.getMessage());
            }
            return withRunner(settings, (runner, s) -> {
                BackfillRunner.RangeReport dayRun = runner.recomputeRange(Mode.NIGHTLY, range, force);
                if (!json.enabled()) out().println(dayRun.summary());
                BackfillRunner.AffectedReport affected = runner.recomputeAffected(force, maxRecords, skipDeletedInput);
                // One object for both runs: the day's recompute, then the affected windows.
                ObjectNode both = JsonOutput.object();
                both.put("mode", Mode.NIGHTLY.wireName());
                both.put("date", day.toString());
                both.set("range", dayRun.json());
                both.set("affected", affected.json());
                report(affected.summary(), both);
            });
        }
    }

    @Command(
            name = "compact",
            sortOptions = false,
            description = {
                "Rewrite the small files of complete lake hours into a few large files, then delete hours"
                        + " older than lake.retention (if set).",
                "Hours whose start falls in the range and that end at or before the lake's completeness boundary;"
                        + " hidden (in-progress) files are left alone. Each hour is swapped under the day's"
                        + " backfill lock: a backfill never sees it half done. Rerunning does nothing to a"
                        + " compacted hour and folds in files that arrived since."
            })
    static final class CompactCommand extends BackfillCommand {
        @CommandLine.ArgGroup(exclusive = true, multiplicity = "0..1")
        Scope scope;

        static final class Scope {
            @Option(
                    names = "--date",
                    required = true,
                    paramLabel = "DATE",
                    converter = DateConverter.class,
                    description = "A calendar day in time-zone, e.g. 2026-11-28: the hours starting on it"
                            + " (default, without --from/--to: yesterday in time-zone).")
            LocalDate date;

            @CommandLine.ArgGroup(exclusive = false)
            Between between;
        }

        static final class Between {
            @Option(
                    names = "--from",
                    required = true,
                    paramLabel = "INSTANT",
                    converter = InstantConverter.class,
                    description = "The hours starting at or after this instant (ISO-8601 UTC) ...")
            Instant from;

            @Option(
                    names = "--to",
                    required = true,
                    paramLabel = "INSTANT",
                    converter = InstantConverter.class,
                    description = "... and before this one.")
            Instant to;
        }

        @Option(
                names = "--lookback",
                arity = "0..1",
                paramLabel = "DURATION",
                fallbackValue = "max-past",
                description = {
                    "Also the hours of this long before the range, to fold in files late events added"
                            + " since they were compacted. Without a value: validation.max-past, as long as late events"
                            + " can arrive (what nightly uses)."
                })
        String lookback;

        /** The hours this run failed to compact, for {@link ScheduledRunMetrics#compact}. */
        private int hoursFailed;

        /** Pushes {@link ScheduledRunMetrics#compact} after the run. */
        @Override
        public Integer call() throws Exception {
            return pushingOutcome(
                    this::compact, code -> ScheduledRunMetrics.compact(code, hoursFailed, main.clock.instant()));
        }

        private int compact() throws Exception {
            BackfillSettings settings = settings();
            TimeRange range;
            try {
                if (scope != null && scope.between != null) {
                    range = TimeRange.of(scope.between.from, scope.between.to);
                } else {
                    LocalDate day =
                            scope != null ? scope.date : NightlyRange.previousDay(main.clock, settings.timeZone());
                    range = new TimeRange(
                            day.atStartOfDay(settings.timeZone()).toInstant().toEpochMilli(),
                            day.plusDays(1)
                                    .atStartOfDay(settings.timeZone())
                                    .toInstant()
                                    .toEpochMilli());
                }
                if (lookback != null) {
                    Duration back = "max-past".equals(lookback) ? settings.maxPast() : Durations.parse(lookback);
                    range = new TimeRange(range.fromMillis() - back.toMillis(), range.toMillis());
                }
            } catch (IllegalArgumentException e) {
                throw BackfillException.badArguments(e.getMessage());
            }
            TimeRange hours = range;
            return withSpark(settings, (spark, db, password, progress) -> {
                LakeCompactor.Report report =
                        new LakeCompactor(spark, db, settings, main.clock, progress).compact(hours);
                report(report.summary(), report.json());
                hoursFailed = report.failed().size();
                if (report.failed().isEmpty()) return ExitCodes.OK;
                report.failed()
                        .forEach((hour, why) -> spec.commandLine()
                                .getErr()
                                .println(RecountCli.path(spec) + ": compaction of " + hour + " failed: " + why));
                return ExitCodes.FAILED;
            });
        }
    }

    static TimeRange checkedRange(Instant from, Instant to, BackfillSettings settings) {
        try {
            return TimeRange.of(from, to).requireAligned(settings.windows());
        } catch (IllegalArgumentException e) {
            throw BackfillException.badArguments(e.getMessage());
        }
    }
}
