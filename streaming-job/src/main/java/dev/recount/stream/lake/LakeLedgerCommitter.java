package dev.recount.stream.lake;

import dev.recount.db.tables.LakeArchivedRowsTable;
import dev.recount.stream.sink.CommitPool;
import dev.recount.stream.sink.PostgresTarget;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * Writes the counts of completed checkpoints to {@code lake_archived_rows}, all requests of one call in one
 * transaction. Repeating a commit is safe (its id is already there). An unreachable PostgreSQL fails the commit,
 * which fails the job; it restarts from the last checkpoint and commits the counts then, as the other committers do.
 */
final class LakeLedgerCommitter implements Committer<LakeLedgerCommittable> {
    static final String ROWS_RECORDED_METRIC = "lakeRowsRecorded";

    private final PostgresTarget target;
    private final Counter rowsRecorded;
    private final CommitPool pool;

    LakeLedgerCommitter(PostgresTarget target, MetricGroup metrics) {
        this.target = target;
        this.rowsRecorded = metrics.counter(ROWS_RECORDED_METRIC);
        this.pool = new CommitPool(target, 1);
    }

    @Override
    public void commit(Collection<CommitRequest<LakeLedgerCommittable>> requests) throws IOException {
        if (requests.isEmpty()) return;
        long rows = 0;
        try (Connection conn = pool.get().getConnection()) {
            conn.setAutoCommit(false);
            try {
                for (CommitRequest<LakeLedgerCommittable> request : requests) {
                    LakeLedgerCommittable c = request.getCommittable();
                    LakeArchivedRowsTable.record(conn, c.commitId(), c.rowsByHour());
                    for (long n : c.rowsByHour().values()) rows += n;
                }
                conn.commit();
            } catch (SQLException e) {
                conn.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new IOException(
                    "recording the lake's archived rows in PostgreSQL (" + target + ") failed: " + e.getMessage(), e);
        }
        rowsRecorded.inc(rows);
    }

    @Override
    public void close() {
        pool.close();
    }
}
