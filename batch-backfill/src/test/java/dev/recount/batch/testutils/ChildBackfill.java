package dev.recount.batch.testutils;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.BackfillMain;
import dev.recount.db.Role;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.testkit.Poll;
import dev.recount.testkit.Signals;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A `backfill` command in a child JVM, as `./recount backfill` starts it (BackfillMain, its own SparkSession), for the
 * tests that kill one with kill -9; with the lock probes those tests stop it with.
 */
public final class ChildBackfill {
    /** The server's check that a client is connected runs every 2 s; a dead client's session ends within that. */
    public static final Duration CLIENT_GONE = Duration.ofSeconds(20);

    private final Process process;
    private final Path log;

    private ChildBackfill(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code backfill <args> --config <t's settings>} on this test's classpath and module openings, with none
     * of the environment of the shell that started the build: as for the in-process runs, its KAFKA_BOOTSTRAP_SERVERS,
     * RECOUNT_JDBC_URL and the like (a developer's local.env) would override the test's settings. Output goes to
     * {@code log}.
     */
    public static ChildBackfill start(BatchStack t, Path log, String... args) throws Exception {
        return start(t, log, List.of(), args);
    }

    /** {@link #start(BatchStack, Path, String...)} with {@code jvmOptions} added to the child's command line. */
    public static ChildBackfill start(BatchStack t, Path log, List<String> jvmOptions, String... args)
            throws Exception {
        String classPath = System.getProperty("java.class.path");
        assertThat(classPath).contains("batch-backfill" + File.separator + "target");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx1g");
        // Spark needs the module openings the test JVM was started with.
        ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--add-opens") || a.startsWith("-Djdk.reflect"))
                .forEach(command::add);
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath, BackfillMain.class.getName()));
        command.addAll(List.of(args));
        command.addAll(List.of("--config", t.configFile().toString()));
        ProcessBuilder pb =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        String path = System.getenv("PATH");
        pb.environment().clear();
        pb.environment().put("PATH", path);
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        return new ChildBackfill(pb.start(), log);
    }

    /**
     * Settings for a child that is to wait at the test's locks, not give up after a timeout ({@code timeout}), on one
     * core (enough for a handful of windows, and the test JVM keeps the other).
     */
    public static void waitingForLocks(BatchStack t, Duration timeout) {
        t.set("batch.lock-timeout", timeout.toSeconds() + "s").set("batch.spark-master", "local[1]");
    }

    /** Run {@code runId} of the test's schema as it stands. */
    public static BatchRunsTable.Run run(BatchStack t, long runId) throws SQLException {
        try (Connection c = t.admin()) {
            return BatchRunsTable.find(c, runId).orElseThrow();
        }
    }

    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** kill -9, and waits for the process to be gone. */
    public void kill9(Duration timeout) throws Exception {
        Signals.send("KILL", process.pid());
        assertThat(process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    /** For a test's tear-down. */
    public void destroy() {
        process.destroyForcibly();
    }

    /** The statement server process {@code pid} runs (or waits in). */
    public static String query(BatchStack t, int pid) throws SQLException {
        try (Connection c = t.admin();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT query FROM pg_stat_activity WHERE pid = " + pid)) {
            assertThat(rs.next()).isTrue();
            return rs.getString(1).strip();
        }
    }

    /** Whether server process {@code pid} is in a transaction that has written (holds a transaction id). */
    public static boolean hasWritten(BatchStack t, int pid) throws SQLException {
        return count(t, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid + " AND backend_xid IS NOT NULL")
                == 1;
    }

    /**
     * Waits until no session of the schema's batch login is left: the server found the killed process gone (within
     * client_connection_check_interval, even while its statement waits for a lock), rolled back and ended its
     * sessions, releasing their locks. Otherwise the next runs would take the dead run for alive and wait for them.
     */
    public static void awaitSessionsEnded(BatchStack t) {
        String login = Role.BATCH.loginName(t.schema);
        Poll.until(
                CLIENT_GONE,
                "the killed run's server processes to end",
                () -> count(t, "SELECT count(*) FROM pg_stat_activity WHERE usename = '" + login + "'") == 0);
    }

    /** The only run of the schema with status running. */
    public static long runningRun(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT run_id FROM batch_runs WHERE status = 'running'")) {
            assertThat(rs.next()).as("the run's row").isTrue();
            long id = rs.getLong(1);
            assertThat(rs.next()).as("one running run").isFalse();
            return id;
        }
    }

    public static long count(BatchStack t, String sql) throws SQLException {
        try (Connection c = t.admin();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
