package dev.recount.core.config;

import java.io.Serializable;

/** Where recount's tables live. The password is deliberately not part of this value: see RecountConfig#postgresPassword. */
public record PostgresSettings(String jdbcUrl, String user, String schema, int poolSize) implements Serializable {
    public PostgresSettings {
        if (!schema.matches("[a-z_][a-z0-9_]*")) {
            throw new IllegalArgumentException("postgres.schema must be a plain lower-case identifier, got '" + schema + "'");
        }
    }
}
