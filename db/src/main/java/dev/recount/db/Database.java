package dev.recount.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.PostgresSettings;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** Connection pools for recount's components: one pool per process, logged in as the component's own login. */
public final class Database {
    /**
     * How often the server checks, while it executes a statement or waits for a lock on behalf of a pooled connection,
     * that the process at the other end is still there (PostgreSQL 14+ on Linux). A process killed mid-statement
     * (kill -9, OOM, a pod's grace period over) then has its transaction rolled back and its session's locks (a run's
     * liveness lock, the advisory locks that order backfills) released within this, not when its statement or lock
     * wait would have ended: until then the next run takes the dead one for alive and waits for its locks, or gives
     * up. It sees a connection closed by the client's kernel, not one whose machine vanished (no FIN ever comes:
     * TCP keepalives cover that).
     */
    public static final String CLIENT_CHECK_INTERVAL = "2s";

    /**
     * The server's TCP settings for a pooled connection, for a client whose machine vanished (lost power, a node gone, a
     * partition): it sends no FIN, so {@link #CLIENT_CHECK_INTERVAL} alone never sees it. With the operating system's
     * defaults (two hours of silence, then nine probes 75 s apart; data in flight retransmitted for about 15 minutes) its
     * session, and a run's locks, would outlive it by that long. With these the socket fails about a minute after the
     * machine went, idle or not, and the check above (or the next read) ends the session. A live client's kernel
     * answers the probes and acknowledges the data however long its statement runs, so nothing long is cut.
     *
     * @param idleSeconds       {@code tcp_keepalives_idle}: silence before the first probe
     * @param intervalSeconds   {@code tcp_keepalives_interval}: between probes
     * @param count             {@code tcp_keepalives_count}: probes unanswered before the client is taken for gone
     * @param userTimeoutMillis {@code tcp_user_timeout} (PostgreSQL 12+): how long data sent may stay unacknowledged;
     *                          keepalives only run while nothing is in flight
     */
    public record TcpSettings(int idleSeconds, int intervalSeconds, int count, int userTimeoutMillis) {
        public static final TcpSettings DEFAULT = new TcpSettings(30, 10, 3, 60_000);
    }

    private Database() {}

    /**
     * A pool whose connections log in as {@code settings.user()}, the component's own LOGIN role, and use
     * {@code settings.schema()}. The login holds {@code role}'s privileges by membership (INHERIT), so there is no
     * {@code SET ROLE} a connection could undo. Every new connection first checks {@link #checkLogin that} — a
     * superuser, or a login of another schema, fails at once with a message naming the login and the role.
     */
    public static HikariDataSource pool(PostgresSettings settings, String password, Role role) {
        return pool(settings, password, role, loginCheck(settings.schema(), role));
    }

    /**
     * Administrative paths only (tests, tools): logs in as {@code settings.user()}, typically a superuser, and
     * {@code SET ROLE}s to the schema's group role. Never for a component: its connection could {@code RESET ROLE}.
     */
    public static HikariDataSource poolSettingRole(PostgresSettings settings, String password, Role role) {
        return pool(
                settings,
                password,
                role,
                "SET ROLE " + role.roleName(settings.schema()) + "; " + loginCheck(settings.schema(), role));
    }

    /**
     * Fails unless {@code c} works with exactly {@code role}'s privileges on {@code schema}: not as a superuser (who
     * would bypass every grant), as a member of the schema's group role that inherits its privileges, and on a schema
     * migrated at least to this build's {@link Migrations#LATEST}.
     *
     * @throws SQLException whose message names the login and the role (SQLSTATE 42501), or the schema's version and
     *     the one this build needs (42704)
     */
    public static void checkLogin(Connection c, String schema, Role role) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(loginCheck(schema, role));
        }
    }

    /**
     * For a connection opened outside a pool (the Spark executors' staging inserts): the same server-side checks for a
     * client that is gone as every pooled connection sets ({@link #CLIENT_CHECK_INTERVAL}, the TCP keepalives), best
     * effort in the same way.
     */
    public static void checkClientConnection(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(CHECK_CLIENT);
        }
    }

    private static HikariDataSource pool(PostgresSettings settings, String password, Role role, String initSql) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(settings.jdbcUrl());
        c.setUsername(settings.user());
        if (password != null) c.setPassword(password);
        c.setSchema(settings.schema());
        c.setMaximumPoolSize(settings.poolSize());
        c.setMinimumIdle(0);
        c.setPoolName("recount-" + role.key());
        c.setConnectionInitSql(initSql + "; " + CHECK_CLIENT);
        c.setAutoCommit(true);
        return new HikariDataSource(c);
    }

    /**
     * Fails unless {@code schema} is at {@link Migrations#LATEST} or later (V23's {@code schema_version()}; a schema
     * without it is older). A newer schema is accepted: while a release's migrations are applied, the components of
     * the release before still run (docs/operations.md, "Upgrading the schema"). Checked with the login, so that a
     * release deployed before its migrations ran stops before it writes anything, with a message that says what to
     * run.
     */
    private static String schemaVersionCheck(String schema) {
        // Inside RAISE's quoted format: its quote doubled.
        String fix =
                ": apply this build''s migrations first (./recount migrate; ./recount up does it for the local stack)";
        return "IF to_regprocedure('" + schema + ".schema_version()') IS NULL THEN "
                + "RAISE EXCEPTION 'recount: schema " + schema + " is older than this build, which needs version "
                + Migrations.LATEST + fix + "' USING ERRCODE = 'undefined_object'; END IF; "
                + "IF coalesce(" + schema + ".schema_version(), 0) < " + Migrations.LATEST + " THEN "
                + "RAISE EXCEPTION 'recount: schema " + schema + " is at version %, older than this build, which needs"
                + " version " + Migrations.LATEST + fix + "', " + schema + ".schema_version() "
                + "USING ERRCODE = 'undefined_object'; END IF; ";
    }

    /**
     * Sets {@link #CLIENT_CHECK_INTERVAL} for the session where the server can: PostgreSQL 14+ and a platform where it
     * can tell a closed socket (Linux; elsewhere the server refuses any value but 0). Best effort: where it cannot, the
     * connection goes on without it and the server says why in a warning, as before this setting existed. And the
     * TCP settings ({@link TcpSettings#DEFAULT}), the same way.
     */
    private static final String CHECK_CLIENT = checkClient(CLIENT_CHECK_INTERVAL, TcpSettings.DEFAULT);

    /**
     * The statement that sets {@code client_connection_check_interval} to {@code interval}, and {@code tcp}, each best
     * effort. Over a Unix-domain socket the server ignores the TCP settings (nothing can vanish there).
     */
    static String checkClient(String interval, TcpSettings tcp) {
        return "DO $recount$ BEGIN "
                + "IF current_setting('server_version_num')::int >= 140000 THEN "
                + "BEGIN PERFORM set_config('client_connection_check_interval', '" + interval + "', false); "
                + "EXCEPTION WHEN OTHERS THEN "
                + "RAISE WARNING 'recount: client_connection_check_interval not set: %', SQLERRM; "
                + "END; END IF; "
                + "BEGIN PERFORM set_config('tcp_keepalives_idle', '" + tcp.idleSeconds() + "', false); "
                + "PERFORM set_config('tcp_keepalives_interval', '" + tcp.intervalSeconds() + "', false); "
                + "PERFORM set_config('tcp_keepalives_count', '" + tcp.count() + "', false); "
                + "IF current_setting('server_version_num')::int >= 120000 THEN "
                + "PERFORM set_config('tcp_user_timeout', '" + tcp.userTimeoutMillis() + "', false); END IF; "
                + "EXCEPTION WHEN OTHERS THEN RAISE WARNING 'recount: TCP keepalives not set: %', SQLERRM; "
                + "END; END $recount$";
    }

    /** Role names come from a validated schema (plain identifier) and a fixed key: nothing to quote. */
    static String loginCheck(String schema, Role role) {
        String group = role.roleName(schema);
        String hint = role == Role.FINANCE
                ? "; finance reads as its own login, a member of " + group
                        + " (see docs/operations.md, Database logins)"
                : "; the " + role.key() + " component must log in as its own login, a member of " + group
                        + " (postgres." + role.key() + ".user; see docs/operations.md, Database logins)";
        return "DO $recount$ BEGIN "
                + "IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN "
                + "RAISE EXCEPTION 'recount: login % is a superuser%', current_user, '" + hint + "' "
                + "USING ERRCODE = 'insufficient_privilege'; END IF; "
                + "IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '" + group + "') THEN "
                + "RAISE EXCEPTION 'recount: role " + group + " does not exist: apply the migrations to schema "
                + schema + " (V10 creates it)' USING ERRCODE = 'undefined_object'; END IF; "
                + "IF NOT pg_has_role(current_user, '" + group + "', 'USAGE') THEN "
                + "RAISE EXCEPTION 'recount: login % does not hold the privileges of " + group + "%', current_user, '"
                + hint + "' USING ERRCODE = 'insufficient_privilege'; END IF; "
                + schemaVersionCheck(schema)
                + "END $recount$";
    }
}
