package dev.recount.db;

import dev.recount.core.config.Component;
import dev.recount.core.config.PostgresSettings;
import java.util.Locale;

/**
 * recount's PostgreSQL group roles. They are scoped to one schema: migration V10 creates {@code <schema>_stream_role},
 * {@code <schema>_batch_role}, {@code <schema>_reconciler_role} and {@code <schema>_finance_role} (NOLOGIN) with
 * exactly the privileges each needs on that schema's objects, and nothing anywhere else. A component logs in as its
 * own LOGIN role, a member of its group role ({@link Logins}), so a login of one schema can never write another
 * schema's tables, and {@code RESET ROLE} gains it nothing.
 *
 * <p>The cluster-wide roles {@code recount_stream} etc. of V1/V6 hold no privileges on a schema once V10 ran there.
 */
public enum Role {
    STREAM,
    BATCH,
    RECONCILER,
    /** Read-only: the serving view and the reconciliation results, for dashboards and finance. */
    FINANCE;

    /** The name inside role names: {@code stream}, {@code batch}, {@code reconciler}, {@code finance}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The schema's group role, {@code <schema>_<key>_role}: what V10 creates and grants. */
    public String roleName(String schema) {
        return checked(schema) + "_" + key() + "_role";
    }

    /** The LOGIN role that {@code ./recount up} and the tests create for this role: {@code <schema>_<key>_login}. */
    public String loginName(String schema) {
        return Component.loginName(checked(schema), key());
    }

    /** The cluster-wide role of V1/V6, shared by every schema, from which V10 takes the schema's privileges away. */
    public String sharedRoleName() {
        return "recount_" + key();
    }

    private static String checked(String schema) {
        // The same rules as postgres.schema: a plain identifier, short enough for the derived names.
        return new PostgresSettings("", "", schema, 1).schema();
    }
}
