package dev.recount.core.config;

import java.util.Locale;

/**
 * The parts of recount that log in to PostgreSQL, each as its own LOGIN role ({@code postgres.<key>.user}) with
 * its own password. The administrative login ({@code postgres.user}) is for {@code up} and the migrations only.
 */
public enum Component {
    STREAM,
    BATCH,
    RECONCILER;

    /** The name in config keys ({@code postgres.stream.user}), role names and environment variables. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The login a component uses when {@code postgres.<key>.user} is empty: {@code <schema>_<key>_login}. */
    public String defaultUser(String schema) {
        return loginName(schema, key());
    }

    /** {@code RECOUNT_STREAM_PGUSER}: sets {@code postgres.stream.user} (e.g. from a Kubernetes Secret). */
    public String userVariable() {
        return "RECOUNT_" + name() + "_PGUSER";
    }

    /**
     * The naming rule for the LOGIN roles that {@code ./recount up} and the tests create, and that the operations
     * guide recommends: {@code <schema>_<role>_login}. One definition for core and db alike.
     */
    public static String loginName(String schema, String roleKey) {
        return schema + "_" + roleKey + "_login";
    }
}
