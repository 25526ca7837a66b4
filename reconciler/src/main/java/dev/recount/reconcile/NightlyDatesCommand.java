package dev.recount.reconcile;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.Instants;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code reconcile nightly-dates}: the days `nightly --since` still has to run, oldest first, one per line. */
@Command(
        name = "nightly-dates",
        mixinStandardHelpOptions = true,
        description = {
            "Prints the days from --since to --until (inclusive, oldest first, one per line) that no succeeded"
                    + " reconciliation covers exactly (midnight to midnight in the configured time-zone) for some metric"
                    + " set of metric-sets.file. Prints nothing when all are done."
        })
public final class NightlyDatesCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--since",
            paramLabel = "D",
            description = "First day to consider, e.g. 2026-11-20. Without it: yesterday"
                    + " in the configured time-zone, printed whether done or not (what a plain `nightly` reruns).")
    String since;

    @Option(
            names = "--until",
            paramLabel = "D",
            description = "Last day to consider (default: yesterday in the configured time-zone).")
    String until;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file (default: $RECOUNT_CONFIG, else built-in defaults).")
    Path configFile;

    private final CommandEnvironment env;

    public NightlyDatesCommand(CommandEnvironment env) {
        this.env = env;
    }

    @Override
    public Integer call() throws Exception {
        CommandLine cmd = spec.commandLine();
        RecountConfig config = env.config(cmd, configFile);
        ZoneId zone = config.timeZone();
        if (since == null) {
            // A plain `nightly` always (re)runs yesterday: both steps are idempotent for a date.
            cmd.getOut().println(LocalDate.now(env.clock().withZone(zone)).minusDays(1));
            cmd.getOut().flush();
            return 0;
        }
        LocalDate first;
        LocalDate last;
        try {
            first = Instants.parseDate(since);
            last = until == null ? LocalDate.now(env.clock().withZone(zone)).minusDays(1) : Instants.parseDate(until);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage(), e);
        }
        if (until != null && last.isBefore(first)) {
            throw new CommandLine.ParameterException(cmd, "--until " + last + " is before --since " + first);
        }
        MetricSets sets;
        try {
            sets = MetricSets.fromConfig(config);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage(), e);
        }
        List<LocalDate> pending;
        try (HikariDataSource pool = CommandEnvironment.pool(config);
                Connection conn = pool.getConnection()) {
            pending = NightlyDates.pending(conn, first, last, zone, sets);
        }
        PrintWriter out = cmd.getOut();
        pending.forEach(out::println);
        out.flush();
        return 0;
    }
}
