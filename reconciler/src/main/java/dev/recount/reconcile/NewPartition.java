package dev.recount.reconcile;

import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A table of its own for the keys of a first run (V19, V20): {@code window_corrections} is partitioned by range of
 * {@code window_start}, and when no key of the days a run reconciles key by key is finalized yet and no partition
 * covers any of them, the run has a new table made for those days (midnight to midnight in the run's time zone),
 * without indexes and already holding the batch rows it finalizes, builds its indexes once ({@link #index}) and
 * attaches it to {@code window_corrections} just before committing ({@link #attach}; or, should that have to wait
 * for a long query, moves the rows into {@code window_corrections}). Inserting a day's million corrections with both
 * indexes updated row by row cost about 4 s; the plain insert and the two index builds about half of that. The batch
 * rows go in as the table is created ({@code CREATE TABLE AS}, which writes them in bulk: 0.13–0.57 s less than
 * inserting them into an empty table on the benchmark's day); the run's statement adds only the keys only the stream
 * has. The reconciler owns no table: the schema owner's functions of V19 and V20 (and, for every other metric set,
 * their counterparts migrate creates, named by {@link SetTables}) create, index and attach the table, all in the run's
 * transaction, so nobody sees it before the run commits and a failed run leaves nothing behind. Every metric set's
 * {@code window_corrections} has its own partitions.
 *
 * @param name   the table's name (lower case letters, digits and underscores: safe to put into SQL as it is)
 * @param tables the metric set whose {@code window_corrections} it becomes a partition of
 */
record NewPartition(String name, SetTables tables) {
    /** How long {@link #attach} waits for the default partition's lock before it moves the rows instead. */
    static final Duration ATTACH_LOCK_TIMEOUT = Duration.ofSeconds(2);

    private static final String LOCK_NOT_AVAILABLE = "55P03";

    NewPartition {
        Pattern partitionName =
                Pattern.compile(Pattern.quote(tables.windowCorrectionsPartitionPrefix()) + "[0-9a-z_]+");
        if (!partitionName.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "not a partition name of " + tables.windowCorrections() + ": '" + name + "'");
        }
    }

    /**
     * Creates the table for the days of {@code scope} (in {@code zone}) holding every batch row of {@code scope} as
     * finalized by run {@code runId} (V20: written in bulk, as the table is created), or returns empty when the days
     * cannot have one: a partition covers part of them, or {@code window_corrections} already holds a key in them.
     */
    static Optional<NewPartition> create(Connection conn, SetTables tables, Scope scope, ZoneId zone, long runId)
            throws SQLException {
        LocalDate first = LocalDate.ofInstant(scope.from(), zone);
        LocalDate last = LocalDate.ofInstant(Instant.ofEpochMilli(scope.toMillis() - 1), zone);
        Sql sql = new Sql()
                .add("SELECT " + tables.windowCorrectionsNewPartitionOfBatch() + "(")
                .timestamp(first.atStartOfDay(zone).toInstant().toEpochMilli())
                .add(", ")
                .timestamp(last.plusDays(1).atStartOfDay(zone).toInstant().toEpochMilli())
                .add(", ")
                .bigint(runId)
                .add(", ")
                .timestamp(scope.fromMillis())
                .add(", ")
                .timestamp(scope.toMillis())
                .add(", ");
        if (scope.windowStarts() == null) sql.add("NULL::timestamptz[]");
        else sql.timestamps(scope.windowStarts());
        try (PreparedStatement ps = sql.add(")").prepare(conn);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return Optional.ofNullable(rs.getString(1)).map(name -> new NewPartition(name, tables));
        }
    }

    /** Builds the table's primary key and per-campaign index, with {@code maintenanceWorkMem} (a validated size). */
    void index(Connection conn, String maintenanceWorkMem) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("SET LOCAL maintenance_work_mem = '" + maintenanceWorkMem + "'");
        }
        call(conn, tables.windowCorrectionsIndexPartition());
    }

    /**
     * Makes the table a partition of {@code window_corrections}, or, when that would have to wait longer than
     * {@link #ATTACH_LOCK_TIMEOUT}, moves its rows into {@code window_corrections} instead. Attaching locks the
     * default partition (PostgreSQL checks that none of its rows fall into the table's range) until the run commits,
     * so it comes last; and while it waits for a query that reads the default partition (any query of
     * {@code window_metrics} whose range it cannot rule out), every reader arriving meanwhile queues behind it. So it
     * waits briefly: after that the rows are inserted through {@code window_corrections} (into the default partition,
     * which blocks no reader; as slow as inserting them there in the first place) and the table is dropped.
     *
     * @return whether the table was attached (false: its rows were moved and it is gone)
     */
    boolean attach(Connection conn) throws SQLException {
        Savepoint beforeAttach = conn.setSavepoint();
        try (Statement st = conn.createStatement()) {
            st.execute("SET LOCAL lock_timeout = '" + ATTACH_LOCK_TIMEOUT.toMillis() + "ms'");
            call(conn, tables.windowCorrectionsAttachPartition());
            st.execute("SET LOCAL lock_timeout = DEFAULT");
            conn.releaseSavepoint(beforeAttach);
            return true;
        } catch (SQLException e) {
            if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) throw e;
            conn.rollback(beforeAttach); // also the lock_timeout
            call(conn, tables.windowCorrectionsMergePartition());
            return false;
        }
    }

    private void call(Connection conn, String function) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT " + function + "(?)")) {
            ps.setString(1, name);
            ps.execute();
        }
    }
}
