package dev.recount.db;

/**
 * The PostgreSQL roles of recount (created by migration V1, granted by V6). Each component's connections
 * run {@code SET ROLE} to its role, so even an administrative login works with least privilege.
 */
public enum Role {
    STREAM("recount_stream"),
    BATCH("recount_batch"),
    RECONCILER("recount_reconciler"),
    FINANCE("recount_finance");

    private final String roleName;

    Role(String roleName) {
        this.roleName = roleName;
    }

    public String roleName() {
        return roleName;
    }
}
