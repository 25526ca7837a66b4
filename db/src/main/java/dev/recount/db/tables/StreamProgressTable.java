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

    static final String ADVANCE = "INSERT INTO " + TABLE
            + " (job_name, lake_complete_until, checkpoint_id, lineage, updated_at)"
            + " VALUES (?, ?, ?, ?, now()) ON CONFLICT (job_name) DO UPDATE SET"
            + " lake_complete_until = GREATEST(" + TABLE + ".lake_complete_until, EXCLUDED.lake_complete_until),"
            + " checkpoint_id = EXCLUDED.checkpoint_id, lineage = EXCLUDED.lineage, updated_at = EXCLUDED.updated_at";

    /**
     * The last commit of a stream job: the checkpoint whose progress mark it carried, in which lineage (chain of
     * runs whose checkpoint numbers continue each other); lineage is null for rows of versions before it existed.
     */
    public record Committed(String lineage, long checkpointId) {}

    private StreamProgressTable() {}

    /**
     * @param checkpointId the checkpoint the progress mark was taken at; a later checkpoint's outputs are what this
     *                     transaction commits
     * @param lineage      see {@link Committed}
     */
    public static void advance(
            Connection conn, String jobName, long lakeCompleteUntilMillis, long checkpointId, String lineage)
            throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(ADVANCE)) {
            ps.setString(1, jobName);
            Timestamps.bind(ps, 2, lakeCompleteUntilMillis);
            ps.setLong(3, checkpointId);
            ps.setString(4, lineage);
            ps.executeUpdate();
        }
    }

    /** What {@code jobName} committed last, if it ever committed. */
    public static Optional<Committed> committed(Connection conn, String jobName) throws SQLException {
        try (PreparedStatement ps =
                conn.prepareStatement("SELECT lineage, checkpoint_id FROM " + TABLE + " WHERE job_name = ?")) {
            ps.setString(1, jobName);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new Committed(rs.getString(1), rs.getLong(2))) : Optional.empty();
            }
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
