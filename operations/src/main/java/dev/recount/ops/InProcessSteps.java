package dev.recount.ops;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.batch.BackfillMain;
import dev.recount.batch.BackfillRunner;
import dev.recount.core.config.Component;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.reconcile.CommandEnvironment;
import dev.recount.reconcile.NightlyDates;
import dev.recount.reconcile.ReconcileMain;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

/**
 * The nightly steps as the {@code backfill} and {@code reconcile} commands themselves, run in this JVM with the same
 * settings file and environment: each step logs in as its own component and keeps its own checks, locks and
 * messages. Nothing here re-implements a step.
 */
final class InProcessSteps implements NightlySteps {
    private final OperationsEnvironment env;
    private final RecountConfig config;
    private final Path configFile;
    private final Path reportDir;
    private final String master;
    private final String lake;
    private final boolean force;
    private final PrintWriter out;
    private final PrintWriter err;

    InProcessSteps(
            OperationsEnvironment env, RecountConfig config, StepOptions options, PrintWriter out, PrintWriter err) {
        this.env = env;
        this.config = config;
        this.configFile = options.configFile;
        this.reportDir = options.reportDir;
        this.master = options.master;
        this.lake = options.lake;
        this.force = options.force;
        this.out = out;
        this.err = err;
    }

    @Override
    public int backfill(LocalDate day) {
        return force
                ? backfill("nightly", "--date", day.toString(), "--force")
                : backfill("nightly", "--date", day.toString());
    }

    @Override
    public int compact(LocalDate day) {
        return backfill("compact", "--date", day.toString(), "--lookback");
    }

    private int backfill(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        addConfig(all);
        if (master != null) all.addAll(List.of("--master", master));
        if (lake != null) all.addAll(List.of("--lake", lake));
        BackfillMain main = new BackfillMain(
                env.variables(), env.clock(), env.sparkSessions(), BackfillRunner.DEFAULT_DRIVER_MAX_ROWS);
        return BackfillMain.execute(main, out, err, all.toArray(String[]::new));
    }

    @Override
    public int reconcile(LocalDate day) {
        List<String> all = new ArrayList<>(List.of("--date", day.toString()));
        addConfig(all);
        if (reportDir != null) all.addAll(List.of("--report-dir", reportDir.toString()));
        return ReconcileMain.execute(
                new CommandEnvironment(env.variables(), env.clock()), out, err, all.toArray(String[]::new));
    }

    @Override
    public List<LocalDate> pending(LocalDate since, LocalDate until) throws Exception {
        try (HikariDataSource pool = Database.pool(
                        config.postgres(Component.RECONCILER), config.password(Component.RECONCILER), Role.RECONCILER);
                Connection conn = pool.getConnection()) {
            return NightlyDates.pending(conn, since, until, config.timeZone(), MetricSets.fromConfig(config));
        }
    }

    private void addConfig(List<String> args) {
        if (configFile != null) args.addAll(List.of("--config", configFile.toString()));
    }
}
