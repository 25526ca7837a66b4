package dev.recount.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.config.PostgresSettings;

/** Connection pools for recount's components: one pool per process, working as the component's role. */
public final class Database {
    private Database() {}

    /**
     * A pool whose connections use {@code settings.schema()} and {@code SET ROLE role}. The login user must
     * be a member of the role (or a superuser, as the local stack's admin is).
     */
    public static HikariDataSource pool(PostgresSettings settings, String password, Role role) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(settings.jdbcUrl());
        c.setUsername(settings.user());
        if (password != null) c.setPassword(password);
        c.setSchema(settings.schema());
        c.setMaximumPoolSize(settings.poolSize());
        c.setMinimumIdle(0);
        c.setPoolName("recount-" + role.name().toLowerCase());
        c.setConnectionInitSql("SET ROLE " + role.roleName());
        c.setAutoCommit(true);
        return new HikariDataSource(c);
    }
}
