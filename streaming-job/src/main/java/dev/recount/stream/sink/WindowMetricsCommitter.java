package dev.recount.stream.sink;

import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the committables of completed checkpoints to PostgreSQL: all rows of every set, each into its set's table
 * ({@link StreamWindowMetricsTable#upsert}: the guarded upsert, a statement per 5,000 rows), and stream_progress, in
 * ONE transaction. Sets are written in name order, rows in key order: one lock order for every committer subtask.
 *
 * <p>Rows of a set the definitions no longer name (pending in a checkpoint taken before it was removed) are not
 * written — the set's table has no definition to write it by — and logged: {@code backfill range --set} recomputes
 * those windows should the set come back.
 *
 * <p>Retries are safe: after a failure Flink restores the committables of the last completed checkpoint and
 * commits them again. The upsert's guard (a higher revision with no fewer events) makes a repeated commit change
 * nothing and stops an older or partial firing from replacing a fuller row; stream_progress only moves forward.
 * Rows the guard holds back are checked: a re-commit of what is stored is normal after a restart; anything else
 * is counted ({@value #ROWS_REFUSED_METRIC}) and logged, because it means the stream saw a window twice.
 *
 * <p>Failures: an unreachable or frozen PostgreSQL fails the commit within the connection's timeouts, which
 * fails the job; it restarts from the last checkpoint with a growing pause until PostgreSQL answers again, and
 * nothing is lost meanwhile (the rows wait in the committer's state). A row PostgreSQL refuses for its content
 * (a data exception or constraint violation, which validation should have prevented) must not stop the job
 * forever: the rows are then committed one by one, the refused ones are recorded in stream_rejected_rows in the
 * same transaction and published to the dead-letter topic ({@link RejectedRows}), and the rest is committed.
 */
final class WindowMetricsCommitter implements Committer<WindowMetricsCommittable> {
    private static final Logger LOG = LoggerFactory.getLogger(WindowMetricsCommitter.class);
    public static final String ROWS_COMMITTED_METRIC = "rowsCommitted";
    public static final String ROWS_REFUSED_METRIC = "rowsRefused";
    public static final String ROWS_REJECTED_METRIC = "rowsRejected";

    private final PostgresTarget target;
    /** Per set name: its stream table. */
    private final Map<String, StreamWindowMetricsTable> tables = new LinkedHashMap<>();

    private final Map<String, MetricSet> definitions = new HashMap<>();
    private final String jobName;
    private final String lineage;
    private final RejectedRows rejectedRows;
    private final Counter rowsCommitted;
    private final Counter rowsRefused;
    private final Counter rowsRejected;
    private volatile long lakeCompleteUntil = Long.MIN_VALUE;
    private final CommitPool pool;
    private boolean caughtUp;

    WindowMetricsCommitter(
            PostgresTarget target,
            MetricSets sets,
            String jobName,
            String lineage,
            RejectedRows rejectedRows,
            MetricGroup metrics) {
        this.target = target;
        for (MetricSet set : sets.sets()) {
            tables.put(set.name(), new StreamWindowMetricsTable(new SetTables(set)));
            definitions.put(set.name(), set);
        }
        this.pool = new CommitPool(target, target.settings().poolSize());
        this.jobName = jobName;
        this.lineage = lineage;
        this.rejectedRows = rejectedRows;
        this.rowsCommitted = metrics.counter(ROWS_COMMITTED_METRIC);
        this.rowsRefused = metrics.counter(ROWS_REFUSED_METRIC);
        this.rowsRejected = metrics.counter(ROWS_REJECTED_METRIC);
        metrics.gauge("lakeCompleteUntil", (Gauge<Long>) () -> lakeCompleteUntil);
    }

    @Override
    public void commit(Collection<CommitRequest<WindowMetricsCommittable>> requests) throws IOException {
        Map<WindowMetricsWriter.RowKey, SetWindowRow> latest = new HashMap<>();
        ProgressMark progress = null;
        for (CommitRequest<WindowMetricsCommittable> request : requests) {
            WindowMetricsCommittable c = request.getCommittable();
            for (SetWindowRow row : c.rows()) {
                latest.merge(WindowMetricsWriter.RowKey.of(row), row, WindowMetricsWriter::later);
            }
            progress = ProgressMark.later(progress, c.progress());
        }
        if (latest.isEmpty() && progress == null) return;

        // One lock order for every committer subtask, so concurrent transactions cannot deadlock.
        Map<String, List<Row>> bySet = new TreeMap<>();
        List<SetWindowRow> sorted = new ArrayList<>(latest.values());
        sorted.sort(WindowMetricsWriter.KEY_ORDER);
        int undefined = 0;
        for (SetWindowRow r : sorted) {
            if (!tables.containsKey(r.set())) {
                undefined++;
                continue;
            }
            bySet.computeIfAbsent(r.set(), s -> new ArrayList<>()).add(r.row());
        }
        if (undefined > 0) {
            LOG.warn(
                    "{} window rows of metric sets the definitions no longer name are not committed: {}",
                    undefined,
                    sorted.stream()
                            .map(SetWindowRow::set)
                            .filter(s -> !tables.containsKey(s))
                            .distinct()
                            .toList());
        }
        int rows = sorted.size() - undefined;
        int rejected;
        try {
            rejected = commitOnce(bySet, progress);
            // Dead letters of refused rows: after a restart too, in case a crash came between the commit and them.
            if (rejected > 0 || !caughtUp) {
                rejectedRows.publishPending(pool.get());
                caughtUp = true;
            }
        } catch (SQLException e) {
            throw new IOException(
                    "committing " + rows + " window rows to PostgreSQL (" + target + ") failed: " + e.getMessage(), e);
        }
        rowsCommitted.inc(rows - rejected);
        if (progress != null) lakeCompleteUntil = Math.max(lakeCompleteUntil, progress.watermark());
        LOG.debug("committed {} window rows, progress {}", rows, progress);
    }

    /** Commits the rows of every set and the progress in one transaction; returns how many rows PostgreSQL refused. */
    private int commitOnce(Map<String, List<Row>> bySet, ProgressMark progress) throws SQLException {
        try (Connection conn = pool.get().getConnection()) {
            conn.setAutoCommit(false);
            try {
                for (Map.Entry<String, List<Row>> e : bySet.entrySet()) {
                    StreamWindowMetricsTable table = tables.get(e.getKey());
                    checkNotApplied(conn, e.getKey(), table.upsert(conn, e.getValue()));
                }
                advance(conn, progress);
                conn.commit();
                return 0;
            } catch (SQLException e) {
                conn.rollback();
                if (!RejectedRows.isContentError(e)) throw e;
                LOG.warn(
                        "PostgreSQL refused a window row for its content ({}); committing the rows one by one",
                        RejectedRows.describe(e));
            }
            return commitRowByRow(conn, bySet, progress);
        }
    }

    /** The slow path: each row behind a savepoint; refused ones are recorded instead, in the same transaction. */
    private int commitRowByRow(Connection conn, Map<String, List<Row>> bySet, ProgressMark progress)
            throws SQLException {
        int rejected = 0;
        try {
            for (Map.Entry<String, List<Row>> e : bySet.entrySet()) {
                String set = e.getKey();
                StreamWindowMetricsTable table = tables.get(set);
                List<Row> notApplied = new ArrayList<>();
                for (Row row : e.getValue()) {
                    Savepoint before = conn.setSavepoint();
                    try {
                        notApplied.addAll(table.upsert(conn, List.of(row)));
                        conn.releaseSavepoint(before);
                    } catch (SQLException refused) {
                        conn.rollback(before);
                        if (!RejectedRows.isContentError(refused)) throw refused;
                        if (rejectedRows.record(conn, definitions.get(set), row, refused)) rejected++;
                        rowsRejected.inc();
                        LOG.error(
                                "PostgreSQL refused the window row {} revision {} ({}): it goes to the dead-letter "
                                        + "topic and stream_rejected_rows instead",
                                RejectedRows.keyText(definitions.get(set), row),
                                row.revision(),
                                RejectedRows.describe(refused));
                    }
                }
                checkNotApplied(conn, set, notApplied);
            }
            advance(conn, progress);
            conn.commit();
            return rejected;
        } catch (SQLException e) {
            conn.rollback();
            throw e;
        }
    }

    private void advance(Connection conn, ProgressMark progress) throws SQLException {
        if (progress != null) {
            StreamProgressTable.advance(conn, jobName, progress.watermark(), progress.checkpointId(), lineage);
        }
    }

    /**
     * Rows the guard did not apply: the same row again (a re-commit after a restart) or an older firing is normal;
     * a different row at the same revision, or a later firing with fewer events, means a window was counted twice
     * by the stream — refused, counted and logged, so the fault tests and the alerts see it.
     */
    private void checkNotApplied(Connection conn, String set, List<Row> notApplied) throws SQLException {
        if (notApplied.isEmpty()) return;
        MetricSet definition = definitions.get(set);
        Map<WindowKey, Row> stored = tables.get(set)
                .read(conn, notApplied.stream().map(r -> r.window().key()).toList());
        int events = definition.eventsIndex();
        for (Row row : notApplied) {
            Row current = stored.get(row.window().key());
            boolean harmless = current != null && (current.revision() > row.revision() || current.equals(row));
            if (!harmless) {
                rowsRefused.inc();
                LOG.warn(
                        "refused to replace window row {} (stored: revision {}, {} events) with revision {} holding {} "
                                + "events: a later firing never has fewer events",
                        RejectedRows.keyText(definition, row),
                        current == null ? "-" : current.revision(),
                        current == null ? "-" : current.window().values().get(events),
                        row.revision(),
                        row.window().values().get(events));
            }
        }
    }

    @Override
    public void close() {
        rejectedRows.close();
        pool.close();
    }
}
