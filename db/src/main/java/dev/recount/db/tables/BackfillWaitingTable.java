package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * {@code backfill_waiting} (V25): backfill records that {@code backfill affected} could not settle yet, held here so
 * that the topic's offsets can move past them. A run loads them ({@link #load}), keeps those it still cannot settle
 * ({@link #keep}) and deletes the others ({@link #settle}), all in the transaction that commits its results.
 */
public final class BackfillWaitingTable {
    public static final String TABLE = "backfill_waiting";

    private BackfillWaitingTable() {}

    /** Where a record sits on the topic: the table's key within one topic. */
    public record Position(int partition, long offset) {}

    /**
     * One waiting record.
     *
     * @param record the backfill record's JSON, as read from the topic
     * @param reason why the last run that checked it could not settle it
     */
    public record Waiting(Position position, String record, String reason) {}

    /**
     * How many records wait on a topic, since when the oldest has, and for how long by the database's clock (0 when
     * none waits): the one clock that also set the start.
     */
    public record Summary(long records, Optional<Long> oldestSinceMillis, long oldestWaitingSeconds) {
        public static final Summary NONE = new Summary(0, Optional.empty(), 0);
    }

    /**
     * Up to {@code limit} records waiting on {@code topic}, those checked least recently first, so that every record
     * is checked again even when more wait than one run takes.
     */
    public static List<Waiting> load(Connection conn, String topic, int limit) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT kafka_partition, kafka_offset, record, reason FROM "
                + TABLE + " WHERE topic = ? ORDER BY last_checked_by, kafka_partition, kafka_offset LIMIT ?")) {
            ps.setString(1, topic);
            ps.setInt(2, limit);
            return read(ps);
        }
    }

    /**
     * The records waiting on {@code topic} at {@code positions} (those a run read from the topic again, after a run
     * whose offset commit failed), whichever were checked when.
     */
    public static List<Waiting> loadAt(Connection conn, String topic, Collection<Position> positions)
            throws SQLException {
        if (positions.isEmpty()) return List.of();
        try (PreparedStatement ps = conn.prepareStatement("SELECT w.kafka_partition, w.kafka_offset, w.record,"
                + " w.reason FROM " + TABLE + " w JOIN unnest(?::int[], ?::bigint[]) AS s(kafka_partition,"
                + " kafka_offset) USING (kafka_partition, kafka_offset) WHERE w.topic = ?")) {
            bindPositions(conn, ps, positions);
            ps.setString(3, topic);
            return read(ps);
        }
    }

    /** The rows {@code ps} selects: kafka_partition, kafka_offset, record, reason. */
    private static List<Waiting> read(PreparedStatement ps) throws SQLException {
        List<Waiting> waiting = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                waiting.add(new Waiting(
                        new Position(rs.getInt("kafka_partition"), rs.getLong("kafka_offset")),
                        rs.getString("record"),
                        rs.getString("reason")));
            }
        }
        return waiting;
    }

    /**
     * Records that still wait after run {@code runId} checked them: new ones are added, known ones keep the time
     * they started waiting and get the new reason and record (a run that settled some of a record's metric sets keeps
     * it naming only the others, so that no later run recomputes a set's window again).
     */
    public static void keep(Connection conn, String topic, long runId, Collection<Waiting> waiting)
            throws SQLException {
        if (waiting.isEmpty()) return;
        try (PreparedStatement ps = conn.prepareStatement(
                "INSERT INTO " + TABLE
                        + " (topic, kafka_partition, kafka_offset, record, reason, last_checked_by) VALUES (?, ?, ?, ?, ?, ?)"
                        + " ON CONFLICT (topic, kafka_partition, kafka_offset) DO UPDATE"
                        + " SET record = EXCLUDED.record, reason = EXCLUDED.reason, last_checked_by = EXCLUDED.last_checked_by")) {
            for (Waiting w : waiting) {
                ps.setString(1, topic);
                ps.setInt(2, w.position().partition());
                ps.setLong(3, w.position().offset());
                ps.setString(4, w.record());
                ps.setString(5, w.reason());
                ps.setLong(6, runId);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Deletes records that no longer wait (their results are committed in this transaction); returns how many. */
    public static int settle(Connection conn, String topic, Collection<Position> settled) throws SQLException {
        if (settled.isEmpty()) return 0;
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + TABLE + " w USING unnest(?::int[],"
                + " ?::bigint[]) AS s(kafka_partition, kafka_offset) WHERE w.topic = ?"
                + " AND w.kafka_partition = s.kafka_partition AND w.kafka_offset = s.kafka_offset")) {
            bindPositions(conn, ps, settled);
            ps.setString(3, topic);
            return ps.executeUpdate();
        }
    }

    /** How many records wait on {@code topic}, and the oldest's start. */
    public static Summary summary(Connection conn, String topic) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT count(*) AS records, min(waiting_since) AS oldest, coalesce(extract(epoch FROM now()"
                        + " - min(waiting_since))::bigint, 0) AS age FROM " + TABLE + " WHERE topic = ?")) {
            ps.setString(1, topic);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Summary(
                        rs.getLong("records"),
                        Optional.ofNullable(Timestamps.readNullable(rs, "oldest")),
                        rs.getLong("age"));
            }
        }
    }

    /** Binds {@code positions} as two arrays, partitions then offsets, to parameters 1 and 2 (for {@code unnest}). */
    private static void bindPositions(Connection conn, PreparedStatement ps, Collection<Position> positions)
            throws SQLException {
        Integer[] partitions = new Integer[positions.size()];
        Long[] offsets = new Long[positions.size()];
        int i = 0;
        for (Position p : positions) {
            partitions[i] = p.partition();
            offsets[i++] = p.offset();
        }
        ps.setArray(1, conn.createArrayOf("integer", partitions));
        ps.setArray(2, conn.createArrayOf("bigint", offsets));
    }
}
