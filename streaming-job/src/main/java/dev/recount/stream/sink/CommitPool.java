package dev.recount.stream.sink;

import com.zaxxer.hikari.HikariDataSource;

/**
 * A committer's pool of the stream's login ({@link PostgresTarget#commitPool}), opened on first use — on the
 * TaskManager the committer runs on, never where the job graph is built — and closed with the committer.
 */
public final class CommitPool implements AutoCloseable {
    private final PostgresTarget target;
    private final int size;
    private HikariDataSource pool;

    public CommitPool(PostgresTarget target, int size) {
        this.target = target;
        this.size = size;
    }

    public HikariDataSource get() {
        if (pool == null) pool = target.commitPool(size);
        return pool;
    }

    @Override
    public void close() {
        if (pool != null) pool.close();
    }
}
