package dev.recount.faults;

import dev.recount.core.config.LocalEnvFile;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;

/**
 * The embedded stack (Kafka and PostgreSQL) the rounds run against, known by its home directory: what {@code ./recount
 * up --home} wrote into its local.env is how the suite and every command it starts reach it. The suite's own handle
 * (its main code uses no test support); a test hands it the stack it started ({@link #at}).
 */
final class Stack {
    private static final Duration WAIT = Duration.ofMinutes(3);

    private final Path home;
    private final Map<String, String> env;

    private Stack(Path home, Map<String, String> env) {
        this.home = home;
        this.env = Map.copyOf(env);
    }

    /** A stack already running with its data under {@code home}. */
    static Stack at(Path home) {
        return new Stack(home, LocalEnvFile.read(LocalEnvFile.in(home)));
    }

    /** Starts a stack under {@code home} with {@code ./recount up}, as a user does, and waits until it answers. */
    static Stack start(Path home) {
        Launcher launcher = new Launcher(Launcher.repositoryRoot(), Map.of());
        Path log = home.resolve("stack.log");
        int exit = launcher.run(log, WAIT, "up", "--home", home.toString());
        if (exit != 0) throw new IllegalStateException("`recount up` exited " + exit + "; see " + log);
        return at(home);
    }

    /** {@code ./recount down}: the stack's processes stop, its data stays under the home. */
    void stop() {
        Path log = home.resolve("stack.log");
        int exit = new Launcher(Launcher.repositoryRoot(), env).run(log, WAIT, "down", "--home", home.toString());
        if (exit != 0) throw new IllegalStateException("`recount down` exited " + exit + "; see " + log);
    }

    Path home() {
        return home;
    }

    /** Everything local.env holds: the environment of every command the suite starts. */
    Map<String, String> environment() {
        return env;
    }

    String bootstrapServers() {
        return require("KAFKA_BOOTSTRAP_SERVERS");
    }

    /** Where `up` keeps the components' passwords (postgres.password-dir): the rounds' logins go there too. */
    Path passwordDir() {
        return Path.of(require("RECOUNT_PGPASSWORD_DIR"));
    }

    /** The administrator, who creates schemas and logins and reads everything the judge reads. */
    Connection adminConnection() throws SQLException {
        return DriverManager.getConnection(
                require("RECOUNT_JDBC_URL"), require("PGUSER"), env.getOrDefault("PGPASSWORD", ""));
    }

    /** An empty schema of a name no other round has; `migrate` fills it. */
    String createSchema(String prefix) {
        String schema = Names.unique(prefix).replace('-', '_');
        try (Connection c = adminConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create schema " + schema, e);
        }
        return schema;
    }

    private String require(String key) {
        String v = env.get(key);
        if (v == null || v.isBlank()) throw new IllegalStateException(key + " missing from " + LocalEnvFile.in(home));
        return v;
    }
}
