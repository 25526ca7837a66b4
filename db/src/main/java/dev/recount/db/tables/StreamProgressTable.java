package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * {@code stream_progress}: how far in event time the raw event lake is complete, per stream job. Only moves
 * forward: a job restored from an older checkpoint does not pull the boundary back.
 */
public final class StreamProgressTable {
    public static final String TABLE = "stream_progress";

    static final String ADVANCE = "INSERT INTO " + TABLE + " (job_name, lake_complete_until, checkpoint_id, updated_at)"
            + " VALUES (?, ?, ?, now()) ON CONFLICT (job_name) DO UPDATE SET"
            + " lake_complete_until = GREATEST(" + TABLE + ".lake_complete_until, EXCLUDED.lake_complete_until),"
            + " checkpoint_id = EXCLUDED.checkpoint_id, updated_at = EXCLUDED.updated_at";

    private StreamProgressTable() {}

    public static void advance(Connection conn, String jobName, long lakeCompleteUntilMillis, long checkpointId)
            throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(ADVANCE)) {
            ps.setString(1, jobName);
            Timestamps.bind(ps, 2, lakeCompleteUntilMillis);
            ps.setLong(3, checkpointId);
            ps.executeUpdate();
        }
    }

    /** The least completeness over all stream jobs writing this lake, or empty if none has committed yet. */
    public static Optional<Long> lakeCompleteUntil(Connection conn) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT min(lake_complete_until) AS until FROM " + TABLE);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return Optional.ofNullable(Timestamps.readNullable(rs, "until"));
        }
    }
}
