package dev.recount.reconcile;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A run's {@link ScopeSurvey}, read on a second connection while the run's own connection works on something that
 * does not need it (the first run of a range: the key-by-key statement into a new partition). The second connection
 * reads in the run's snapshot ({@code pg_export_snapshot}, then {@code SET TRANSACTION SNAPSHOT}), so the survey is
 * exactly the one the run's connection would read at that point: same stream, batch and finalized rows, none of
 * the run's own writes. It reads only, in a read-only transaction, and commits nothing.
 *
 * <p>A first run's own connection fills and indexes a table in one PostgreSQL process (an {@code INSERT} is never
 * parallel), so on a machine of two cores one core would wait; this connection first joins stream and batch into the
 * run's diffs ({@link DiffsFile}), then reads the survey, on that core meanwhile.
 */
final class SnapshotSurvey implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotSurvey.class);
    private static final Pattern SNAPSHOT_ID = Pattern.compile("[0-9A-Fa-f-]+");
    /** How long a cancelled survey is given to end before its next statement is cancelled too. */
    private static final Duration CANCEL_CHECK = Duration.ofMillis(100);

    private final Connection connection;
    private final FutureTask<ScopeSurvey> task;
    private final CompletableFuture<DiffsFile> diffs;

    private SnapshotSurvey(Connection connection, FutureTask<ScopeSurvey> task, CompletableFuture<DiffsFile> diffs) {
        this.connection = connection;
        this.task = task;
        this.diffs = diffs;
    }

    /**
     * Whether {@code dataSource} can lend a second connection besides the run's now: a pool of one, or one whose
     * other connections are all in use (by whatever else the process does with it), would make the survey wait up to
     * the pool's connection timeout and then fail the run. Then the survey is read first, on the run's connection.
     */
    static boolean possible(DataSource dataSource) {
        if (!(dataSource instanceof HikariDataSource pool)) return true;
        HikariPoolMXBean state = pool.getHikariPoolMXBean();
        int max = pool.getMaximumPoolSize();
        return max >= 2 && (state == null || state.getIdleConnections() > 0 || state.getTotalConnections() < max);
    }

    /**
     * Exports the snapshot of the run's transaction on {@code run} (REPEATABLE READ) and starts reading the survey of
     * {@code scope} of {@code sql}'s metric set in it on a connection of {@code dataSource}, on a thread of its own.
     * The snapshot holds none of the run's own writes (other sets' objects, reconciled earlier in the run, and the
     * serving settings); the survey and the diffs' query read only this set's stream, batch and finalized rows, which
     * the run has not written yet. Only a first run of the set reads it so: nothing of the scope is recorded, so its
     * finalized side is read, not taken as recorded.
     * With {@code differingKeys} ({@link ReconcileStatements#differingKeys}), that query runs first, into {@code
     * into} ({@link #diffs}), and the survey after it; the file stays its creator's to close.
     */
    static SnapshotSurvey start(
            DataSource dataSource,
            Connection run,
            ReconcileStatements sql,
            Scope scope,
            ScopeDays days,
            long finalWrites,
            String workMem,
            Sql differingKeys,
            DiffsFile into)
            throws SQLException {
        if ((differingKeys == null) != (into == null))
            throw new IllegalArgumentException("the diffs' query and their file come together");
        String snapshot;
        try (Statement st = run.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_export_snapshot()")) {
            rs.next();
            snapshot = rs.getString(1);
        }
        if (!SNAPSHOT_ID.matcher(snapshot).matches())
            throw new IllegalStateException("unexpected snapshot id '" + snapshot + "'");
        Connection c = dataSource.getConnection();
        CompletableFuture<DiffsFile> diffs = new CompletableFuture<>();
        FutureTask<ScopeSurvey> task = new FutureTask<>(() -> {
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            c.setReadOnly(true);
            try {
                try (Statement st = c.createStatement()) {
                    // First in the transaction: from here on it sees what the run's transaction saw when it exported.
                    st.execute("SET TRANSACTION SNAPSHOT '" + snapshot + "'");
                    st.execute("SET LOCAL work_mem = '" + workMem + "'");
                    // One process: parallel workers would compete with the run's statement for the same cores (two
                    // workers made the pair slower than reading the survey first, 7.2 s against 6.1 s).
                    st.execute("SET LOCAL max_parallel_workers_per_gather = 0");
                }
                if (differingKeys != null) {
                    try {
                        diffs.complete(into.write(c, differingKeys));
                    } catch (SQLException | RuntimeException e) {
                        diffs.completeExceptionally(e);
                        throw e;
                    }
                }
                ScopeSurvey survey = ScopeSurvey.read(c, sql, scope, days, Map.of(), finalWrites);
                c.commit();
                return survey;
            } finally {
                if (!c.getAutoCommit()) c.rollback();
                // Whatever ended the task before the diffs were read: whoever waits for them must not wait forever.
                diffs.completeExceptionally(new IllegalStateException("the survey ended before it read the diffs"));
            }
        });
        Thread thread = new Thread(task, "recount-reconcile-survey");
        thread.setDaemon(true);
        thread.start();
        return new SnapshotSurvey(c, task, diffs);
    }

    /** Waits for the diffs the survey was started with (they come first). */
    DiffsFile diffs() throws SQLException {
        return await(diffs, "the run's diffs");
    }

    /** Waits for the survey. */
    ScopeSurvey get() throws SQLException {
        return await(task, "the scope's survey");
    }

    private static <T> T await(java.util.concurrent.Future<T> future, String what) throws SQLException {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while " + what + " was read", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof SQLException sql) throw sql;
            if (cause instanceof RuntimeException runtime) throw runtime;
            if (cause instanceof Error error) throw error;
            throw new IllegalStateException(cause);
        }
    }

    /**
     * Ends the survey and returns the connection. A run that failed before it needed the survey cancels it: each
     * statement of it that is still running (the survey is a few statements, so again until it is done).
     */
    @Override
    public void close() {
        while (!task.isDone()) {
            try {
                connection.unwrap(PGConnection.class).cancelQuery();
            } catch (SQLException e) {
                LOG.warn("could not cancel the survey's statement: {}", e.getMessage());
                break;
            }
            try {
                task.get(CANCEL_CHECK.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // Still running: its next statement had begun; cancel that one too.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (ExecutionException e) {
                // The cancellation, or a failure the run no longer needs to hear about.
            }
        }
        try {
            task.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            // Already reported by get(), or the run failed first and this is its cancellation.
        }
        try {
            connection.close();
        } catch (SQLException e) {
            LOG.warn("could not return the survey's connection: {}", e.getMessage());
        }
    }
}
