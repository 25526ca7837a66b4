package dev.recount.stream.sink;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.window.WindowKey;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the committables of completed checkpoints to PostgreSQL: all rows with {@link StreamWindowMetricsTable#UPSERT}
 * as one JDBC batch, and stream_progress, in ONE transaction.
 *
 * <p>Retries are safe: after a failure Flink restores the committables of the last completed checkpoint and
 * commits them again. The upsert's revision guard ({@code revision <= EXCLUDED.revision}) makes a repeated
 * commit a no-op in effect and stops an older revision from replacing a newer one; stream_progress only moves
 * forward. A failed commit fails the job (which restarts from the checkpoint) rather than dropping rows.
 */
final class WindowMetricsCommitter implements Committer<WindowMetricsCommittable> {
    private static final Logger LOG = LoggerFactory.getLogger(WindowMetricsCommitter.class);

    private final PostgresTarget target;
    private final String jobName;
    private final Counter rowsCommitted;
    private volatile long lakeCompleteUntil = Long.MIN_VALUE;
    private HikariDataSource dataSource;

    WindowMetricsCommitter(PostgresTarget target, String jobName, MetricGroup metrics) {
        this.target = target;
        this.jobName = jobName;
        this.rowsCommitted = metrics.counter("rowsCommitted");
        metrics.gauge("lakeCompleteUntil", (Gauge<Long>) () -> lakeCompleteUntil);
    }

    @Override
    public void commit(Collection<CommitRequest<WindowMetricsCommittable>> requests) throws IOException {
        Map<WindowKey, Row> latest = new HashMap<>();
        ProgressMark progress = null;
        for (CommitRequest<WindowMetricsCommittable> request : requests) {
            WindowMetricsCommittable c = request.getCommittable();
            for (Row row : c.rows()) {
                latest.merge(row.window().key(), row, (old, neu) -> neu.revision() >= old.revision() ? neu : old);
            }
            progress = ProgressMark.later(progress, c.progress());
        }
        if (latest.isEmpty() && progress == null) return;

        List<Row> rows = new ArrayList<>(latest.values());
        // One lock order for every committer subtask, so concurrent transactions cannot deadlock.
        rows.sort(WindowMetricsWriter.KEY_ORDER);
        try (Connection conn = dataSource().getConnection()) {
            conn.setAutoCommit(false);
            try {
                if (!rows.isEmpty()) StreamWindowMetricsTable.upsert(conn, rows);
                if (progress != null) {
                    StreamProgressTable.advance(conn, jobName, progress.watermark(), progress.checkpointId());
                }
                conn.commit();
            } catch (SQLException e) {
                conn.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new IOException("committing " + rows.size() + " window rows to PostgreSQL (" + target + ") failed: "
                    + e.getMessage(), e);
        }
        rowsCommitted.inc(rows.size());
        if (progress != null) lakeCompleteUntil = Math.max(lakeCompleteUntil, progress.watermark());
        LOG.debug("committed {} window rows, progress {}", rows.size(), progress);
    }

    private HikariDataSource dataSource() {
        if (dataSource == null) dataSource = Database.pool(target.settings(), target.password(), Role.STREAM);
        return dataSource;
    }

    @Override
    public void close() {
        if (dataSource != null) dataSource.close();
    }
}
