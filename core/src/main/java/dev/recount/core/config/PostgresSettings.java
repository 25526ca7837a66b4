package dev.recount.core.config;

import java.io.Serializable;

/**
 * Where recount's tables live and who logs in. The password is deliberately not part of this value: see
 * RecountConfig#passwordSource.
 */
public record PostgresSettings(String jdbcUrl, String user, String schema, int poolSize) implements Serializable {
    /**
     * Role names derive from the schema ({@code <schema>_reconciler_login}, 17 characters more) and must fit
     * PostgreSQL's 63-byte identifiers: a longer one would be cut silently and name another role.
     */
    public static final int MAX_SCHEMA_LENGTH = 46;

    public PostgresSettings {
        if (!schema.matches("[a-z_][a-z0-9_]*")) {
            throw new IllegalArgumentException(
                    "postgres.schema must be a plain lower-case identifier, got '" + schema + "'");
        }
        if (schema.length() > MAX_SCHEMA_LENGTH) {
            throw new IllegalArgumentException("postgres.schema must be at most " + MAX_SCHEMA_LENGTH
                    + " characters (the role names derived from it must fit PostgreSQL's 63), got '" + schema + "'");
        }
    }
}
