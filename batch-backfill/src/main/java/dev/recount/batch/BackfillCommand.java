package dev.recount.batch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.cli.Pushgateway;
import dev.recount.core.cli.RecountCli;
import dev.recount.core.config.Component;
import dev.recount.core.config.Durations;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.Database;
import dev.recount.db.Role;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.function.IntFunction;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * What every {@code backfill} subcommand shares: its common options, settings read and arguments checked before
 * anything is opened, then the database pool and Spark, and the output. The option blocks more than one subcommand
 * takes are the mixins below, each declared once.
 */
abstract class BackfillCommand implements Callable<Integer> {
    @ParentCommand
    BackfillMain main;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    JsonOutput json;

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

    /** {@code --set NAME}: range, affected and nightly compute every declared metric set, or this one. */
    static final class SetOption {
        @Option(
                names = "--set",
                paramLabel = "NAME",
                description = "Compute only this metric set (default: every set metric-sets.file declares).")
        String name;
    }

    /** {@code --force} of the commands that recompute a range (range, nightly). */
    static final class RangeForce {
        @Option(
                names = "--force",
                description = "Recompute even beyond the lake's completeness boundary, or from lake hours holding"
                        + " fewer rows than the stream archived into them (recorded).")
        boolean force;
    }

    /** How the commands that read the backfill topic (affected, nightly) read it. */
    static final class TopicOptions {
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

        void check() {
            if (maxRecords < 1) throw BackfillException.badArguments("--max-records must be at least 1");
        }
    }

    private RecountConfig config;

    /** The settings, the definitions of the metric sets among them; a bad one is a bad argument (nothing runs). */
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

    /** The sets a run computes: every declared one, or {@code --set}'s (an unknown name is a bad argument). */
    static MetricSets selected(BackfillSettings settings, SetOption set) {
        try {
            return settings.selected(set.name);
        } catch (IllegalArgumentException e) {
            throw BackfillException.badArguments(e.getMessage());
        }
    }

    /** {@code [from, to)}, refused (a bad argument) unless aligned to the windows of every set of {@code sets}. */
    static TimeRange checkedRange(Instant from, Instant to, MetricSets sets) {
        try {
            return TimeRange.of(from, to).requireAligned(sets);
        } catch (IllegalArgumentException e) {
            throw BackfillException.badArguments(e.getMessage());
        }
    }

    interface Work {
        void run(BackfillRunner runner) throws Exception;
    }

    /** Runs {@code work} with a runner of {@code sets}, Spark and the database opened for it. */
    int withRunner(BackfillSettings settings, MetricSets sets, Work work) throws Exception {
        return withSpark(settings, (spark, db, password, progress) -> {
            work.run(new BackfillRunner(spark, db, settings, password, main.driverMaxRows, progress, sets));
            return ExitCode.OK.code();
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
        int code = ExitCode.FAILED.code();
        try {
            code = run.call();
            return code;
        } catch (BackfillException e) {
            code = e.exitCode().code();
            throw e;
        } catch (CommandLine.ParameterException e) {
            code = ExitCode.USAGE.code();
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
