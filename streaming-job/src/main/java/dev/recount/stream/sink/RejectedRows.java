package dev.recount.stream.sink;

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.tables.StreamRejectedRowsTable;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.stream.sink.topic.PublicationMarker;
import dev.recount.stream.sink.topic.TopicRecord;
import dev.recount.stream.sink.topic.TransactionalPublisher;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import javax.sql.DataSource;

/**
 * Window rows PostgreSQL refused for their content: recorded in {@code stream_rejected_rows} inside the commit
 * that stores the other rows, then published to the dead-letter topic with reason {@value #REASON}.
 *
 * <p>Publication is exactly once without a second transaction manager: under the table's advisory lock (writers
 * take it too, so rejection ids become visible in order), the publisher reads its marker, publishes every row
 * after it in one Kafka transaction that moves the marker to the last id, and only then releases the lock. A crash
 * anywhere leaves either the old marker (the rows are published again, once) or the new one (nothing to do). The
 * marker names the table instance, so a schema dropped and created again starts from its first row.
 */
final class RejectedRows implements AutoCloseable {
    static final String REASON = "rejected";
    private static final JsonMapper JSON =
            JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    /** Where dead letters of refused rows go; null publishes nothing (the table still records them). */
    public record Publication(String bootstrapServers, String topic, String publicationId, Properties producerOverrides)
            implements Serializable {
        TransactionalPublisher open(int subtask) {
            // One transactional id per committer subtask (they would fence each other), one marker for all of them:
            // the advisory lock makes their publications take turns.
            return new TransactionalPublisher(
                    bootstrapServers,
                    topic,
                    publicationId + ".rejected-rows." + subtask,
                    publicationId + ".rejected-rows.published",
                    producerOverrides);
        }
    }

    private final TransactionalPublisher publisher;

    RejectedRows(Publication publication, int subtask) {
        this.publisher = publication == null ? null : publication.open(subtask);
    }

    /** SQLSTATE classes that are about the data, not the server: 22 data exception, 23 constraint, 54 limits. */
    static boolean isContentError(SQLException e) {
        String state = sqlState(e);
        return state != null && (state.startsWith("22") || state.startsWith("23") || state.startsWith("54"));
    }

    static String describe(SQLException e) {
        SQLException inner = innermost(e);
        String m = inner.getMessage() == null ? inner.getClass().getSimpleName() : inner.getMessage();
        return (inner.getSQLState() == null ? "" : inner.getSQLState() + ": ")
                + m.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    private static String sqlState(SQLException e) {
        return innermost(e).getSQLState();
    }

    /** A batch failure wraps the statement's own error; that one has the SQLSTATE that matters. */
    private static SQLException innermost(SQLException e) {
        SQLException found = e;
        for (SQLException next = e.getNextException(); next != null; next = next.getNextException()) found = next;
        if (found.getCause() instanceof SQLException cause) return innermost(cause);
        return found;
    }

    /** Records a refused row of {@code set} (once per key and revision); true if it was not recorded before. */
    boolean record(Connection conn, MetricSet set, Row row, SQLException error) throws SQLException {
        StreamRejectedRowsTable.lock(conn);
        return StreamRejectedRowsTable.insert(
                conn, json(keyNode(set, row)), json(rowNode(set, row)), sqlState(error), describe(error));
    }

    /** Publishes every recorded row the dead-letter topic does not have yet. */
    void publishPending(DataSource dataSource) throws SQLException {
        if (publisher == null) return;
        try (Connection conn = dataSource.getConnection()) {
            conn.setAutoCommit(false);
            boolean committed = false;
            try {
                StreamRejectedRowsTable.lock(conn);
                String identity = StreamRejectedRowsTable.identity(conn);
                PublicationMarker marker = publisher.marker();
                long after = marker.lineage().equals(identity) ? marker.sequence() : 0;
                List<StreamRejectedRowsTable.Rejected> pending = StreamRejectedRowsTable.after(conn, after);
                if (!pending.isEmpty()) {
                    List<TopicRecord> records = new ArrayList<>(pending.size());
                    for (StreamRejectedRowsTable.Rejected r : pending) records.add(deadLetter(r));
                    publisher.publish(
                            records,
                            new PublicationMarker(
                                    identity, pending.get(pending.size() - 1).rejectionId()));
                }
                conn.commit(); // releases the lock only now: no writer got between marker and rows
                committed = true;
            } finally {
                if (!committed) conn.rollback();
            }
        }
    }

    private static TopicRecord deadLetter(StreamRejectedRowsTable.Rejected r) {
        ObjectNode n = JSON.createObjectNode();
        n.put("reason", REASON);
        n.put("detail", "PostgreSQL refused this window row: " + r.error());
        n.put("rejection_id", r.rejectionId());
        try {
            n.set("row", JSON.readTree(r.rowJson()));
        } catch (IOException e) {
            n.put("row_json", r.rowJson());
        }
        return new TopicRecord(null, json(n).getBytes(StandardCharsets.UTF_8));
    }

    static String keyText(MetricSet set, Row row) {
        return json(keyNode(set, row));
    }

    /**
     * The row's identity: window start, dimension values by name, revision; for any set but the default set its name
     * first (a default-set key is as the release before metric sets wrote it, so a refusal is recorded once across the
     * upgrade, as a backfill record without sets is the default set's).
     */
    private static ObjectNode keyNode(MetricSet set, Row row) {
        ObjectNode n = JSON.createObjectNode();
        if (!set.isDefault()) n.put("set", set.name());
        n.put("window_start", row.window().key().windowStartMillis());
        List<String> dimensions = set.dimensionNames();
        for (int i = 0; i < dimensions.size(); i++)
            n.put(dimensions.get(i), row.window().key().dimension(i));
        n.put("revision", row.revision());
        return n;
    }

    /** The key, the window end and every measure by name; the set is named whichever it is. */
    private static ObjectNode rowNode(MetricSet set, Row row) {
        ObjectNode n = keyNode(set, row);
        n.put("set", set.name());
        n.put("window_end", row.window().windowEndMillis());
        List<String> measures = set.measureNames();
        for (int i = 0; i < measures.size(); i++)
            n.putPOJO(measures.get(i), row.window().values().get(i));
        return n;
    }

    private static String json(JsonNode n) {
        try {
            return JSON.writeValueAsString(n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (publisher != null) publisher.close();
    }
}
