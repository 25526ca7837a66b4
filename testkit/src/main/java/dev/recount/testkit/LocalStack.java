package dev.recount.testkit;

import dev.recount.core.config.LocalEnvFile;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.Logins;
import dev.recount.db.Migrations;
import dev.recount.db.Role;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The embedded local stack (a real Kafka broker and a real PostgreSQL) for integration tests, started once
 * per test JVM exactly as {@code ./recount up} starts it: by local-stack's main in a child process, so the
 * broker's Scala 2.13 classes never share a classpath with Flink or Spark. Stopped by a shutdown hook.
 *
 * <p>Tests isolate themselves with their own topics ({@link TestNames#unique}) and schemas
 * ({@link #createSchema}), not their own stack: starting one takes seconds.
 */
public final class LocalStack {
    private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
    private static LocalStack shared;

    private final Path home;
    private final Map<String, String> env;

    private LocalStack(Path home, Map<String, String> env) {
        this.home = home;
        this.env = env;
    }

    /** The stack of this JVM, started on first use. */
    public static synchronized LocalStack shared() {
        if (shared == null) {
            try {
                Path home = Files.createTempDirectory("recount-stack-");
                shared = start(home);
                LocalStack started = shared;
                Runtime.getRuntime().addShutdownHook(new Thread(started::stopQuietly, "recount-stack-stop"));
            } catch (IOException e) {
                throw new IllegalStateException("cannot create a directory for the local stack", e);
            }
        }
        return shared;
    }

    /** Starts a stack with its data under {@code home} and waits until both services answer. */
    public static LocalStack start(Path home) {
        int exit = runLauncher(home, START_TIMEOUT, "up", "--home", home.toString());
        if (exit != 0) {
            throw new IllegalStateException("`recount up` exited " + exit + "; see " + home.resolve("launcher.log"));
        }
        return new LocalStack(home, LocalEnvFile.read(LocalEnvFile.in(home)));
    }

    public void stop() {
        int exit = runLauncher(home, Duration.ofMinutes(1), "down", "--home", home.toString());
        if (exit != 0)
            throw new IllegalStateException("`recount down` exited " + exit + "; see " + home.resolve("launcher.log"));
    }

    public Path home() {
        return home;
    }

    public String bootstrapServers() {
        return require("KAFKA_BOOTSTRAP_SERVERS");
    }

    /** JDBC URL of the local database (no schema: tests pick their own). */
    public String jdbcUrl() {
        return require("RECOUNT_JDBC_URL");
    }

    public String adminUser() {
        return require("PGUSER");
    }

    public String adminPassword() {
        return env.getOrDefault("PGPASSWORD", "");
    }

    /** Everything local.env holds, e.g. to pass to a child process as its environment. */
    public Map<String, String> environment() {
        return Map.copyOf(env);
    }

    public Connection adminConnection() throws SQLException {
        return DriverManager.getConnection(jdbcUrl(), adminUser(), adminPassword());
    }

    /**
     * Where this stack keeps the password file of every login (local.env's {@code RECOUNT_PGPASSWORD_DIR}, the
     * setting {@code postgres.password-dir}): {@code ./recount up}'s own logins and those of {@link #createMigratedSchema}.
     */
    public Path passwordDir() {
        return Path.of(require("RECOUNT_PGPASSWORD_DIR"));
    }

    /**
     * A fresh schema set up as {@code ./recount up} sets up its own: recount's migrations, then a LOGIN role per
     * {@link Role} ({@code <schema>_<role>_login}, a member of the schema's group role) with its password in
     * {@link #passwordDir()}. A component configured with {@code postgres.schema} and {@code postgres.password-dir}
     * then logs in as its own login, never as the administrator.
     */
    public String createMigratedSchema(String prefix) {
        return createMigratedSchema(prefix, MetricSets.defaults());
    }

    /**
     * {@link #createMigratedSchema(String)} with the objects of {@code sets} (what {@code ./recount up} and
     * {@code migrate} create for the definitions of {@code metric-sets.file}).
     */
    public String createMigratedSchema(String prefix, MetricSets sets) {
        String schema = createSchema(prefix);
        Migrations.apply(jdbcUrl(), adminUser(), adminPassword(), schema, sets);
        try (Connection c = adminConnection()) {
            Logins.ensureLocal(c, schema, passwordDir());
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the logins of schema " + schema, e);
        }
        return schema;
    }

    /** The password of a login {@link #createMigratedSchema} created. */
    public String password(String login) {
        try {
            return Files.readAllLines(Logins.passwordFile(passwordDir(), login), StandardCharsets.UTF_8)
                    .get(0)
                    .strip();
        } catch (IOException e) {
            throw new IllegalStateException("no password file for login " + login + " in " + passwordDir(), e);
        }
    }

    /** A connection as {@code role}'s login of {@code schema} (what the component gets), working in that schema. */
    public Connection loginConnection(String schema, Role role) throws SQLException {
        String login = role.loginName(schema);
        Connection c = DriverManager.getConnection(jdbcUrl(), login, password(login));
        c.setSchema(schema);
        return c;
    }

    /** Creates an empty schema with a unique name (migrations are the caller's: db's Migrations.apply). */
    public String createSchema(String prefix) {
        String schema = TestNames.unique(prefix).replace('-', '_').toLowerCase();
        try (Connection c = adminConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create schema " + schema, e);
        }
        return schema;
    }

    /**
     * Adds to {@code schema}'s Flyway history a successful migration {@code version} (e.g. "24", "24.1"), as a newer
     * build of recount would have applied it: a schema newer than this build, without changing anything else.
     */
    public void recordMigrationOfANewerBuild(String schema, String version) {
        try (Connection c = adminConnection();
                Statement s = c.createStatement()) {
            s.execute("INSERT INTO " + schema + ".flyway_schema_history (installed_rank, version, description, type,"
                    + " script, checksum, installed_by, execution_time, success) SELECT max(installed_rank) + 1, '"
                    + version + "', 'from a newer build', 'SQL', 'V" + version + "__from_a_newer_build.sql', 0,"
                    + " current_user, 1, true FROM " + schema + ".flyway_schema_history");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot record migration " + version + " in schema " + schema, e);
        }
    }

    /** For the shared stack at JVM exit: stop it and remove its data, which nobody will read again. */
    private void stopQuietly() {
        try {
            stop();
            deleteTree(home);
        } catch (RuntimeException | IOException e) {
            System.err.println("recount testkit: stopping the local stack in " + home + " failed: " + e.getMessage());
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    private String require(String key) {
        String v = env.get(key);
        if (v == null || v.isBlank()) throw new IllegalStateException(key + " missing from " + LocalEnvFile.in(home));
        return v;
    }

    /** Runs local-stack's main in a child JVM; its output goes to {@code home/launcher.log}. */
    static int runLauncher(Path home, Duration timeout, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(stackClasspath());
        command.add("dev.recount.stack.LocalStackMain");
        command.addAll(List.of(args));
        try {
            Files.createDirectories(home);
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(
                            home.resolve("launcher.log").toFile()))
                    .start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        "`recount " + String.join(" ", args) + "` did not finish within " + timeout);
            }
            return p.exitValue();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the local stack launcher", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the local stack", e);
        }
    }

    /** local-stack's jar plus its runtime classpath, as written by the build (see the root pom). */
    static String stackClasspath() {
        Path root = Path.of(System.getProperty("recount.root", ".."))
                .toAbsolutePath()
                .normalize();
        Path target = root.resolve("local-stack").resolve("target");
        Path classpathFile = target.resolve("runtime.classpath");
        try (var jars = Files.list(target)) {
            Path jar = jars.filter(p -> p.getFileName().toString().matches("local-stack-.*\\.jar"))
                    .filter(p -> !p.getFileName().toString().contains("-sources"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException(
                            "no local-stack jar in " + target + ": build local-stack first (mvn package)"));
            return jar
                    + java.io.File.pathSeparator
                    + Files.readString(classpathFile, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot read " + classpathFile + ": build local-stack first (mvn package)", e);
        }
    }
}
