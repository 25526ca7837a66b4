package dev.recount.stream.sink;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.StreamAttributionMetricsTable;
import dev.recount.db.tables.StreamAttributionMetricsTable.Row;
import java.io.IOException;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.metrics.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exactly-once-effective PostgreSQL sink for {@code stream_attribution_metrics}, the window metrics sink's
 * pattern ({@link WindowMetricsSink}): the writer keeps the latest revision per key between checkpoints and hands
 * them over as one committable per checkpoint; the committer upserts them once the checkpoint is complete, all in
 * one transaction. A retried commit (after a restore) changes nothing: the upsert's guard takes only a higher
 * revision with no fewer clicks and conversions.
 *
 * <p>Unlike the window metrics sink it records no lake progress and has no slow path for rows PostgreSQL refuses for
 * their content: every value is a count or a sum of costs the validator bounded, within the table's constraints.
 */
public final class AttributionMetricsSink implements Sink<Row>, SupportsCommitter<AttributionMetricsSink.Committable> {
    private static final long serialVersionUID = 1L;
    public static final String ROWS_COMMITTED_METRIC = "attributionRowsCommitted";

    private final PostgresTarget target;

    public AttributionMetricsSink(PostgresTarget target) {
        this.target = Objects.requireNonNull(target, "target");
    }

    /** The rows of one writer subtask at one checkpoint. */
    public record Committable(List<Row> rows) {
        public Committable {
            rows = List.copyOf(rows);
        }
    }

    static final Comparator<Row> KEY_ORDER = Comparator.comparingLong(
                    (Row r) -> r.attribution().key().windowStartMillis())
            .thenComparing(r -> r.attribution().key().campaignId())
            .thenComparing(r -> r.attribution().key().channelId());

    @Override
    public SinkWriter<Row> createWriter(WriterInitContext context) {
        return new Writer();
    }

    @Override
    public Committer<Committable> createCommitter(CommitterInitContext context) {
        return new PostgresCommitter(target, context.metricGroup().counter(ROWS_COMMITTED_METRIC));
    }

    @Override
    public SimpleVersionedSerializer<Committable> getCommittableSerializer() {
        return new Serializer();
    }

    /** Latest revision per key since the last checkpoint; nothing reaches PostgreSQL before its checkpoint completes. */
    static final class Writer implements CommittingSinkWriter<Row, Committable> {
        private Map<WindowKey, Row> pending = new HashMap<>();

        @Override
        public void write(Row row, Context context) {
            pending.merge(row.attribution().key(), row, (old, neu) -> neu.revision() >= old.revision() ? neu : old);
        }

        @Override
        public void flush(boolean endOfInput) {
            // Rows leave with prepareCommit(), at every checkpoint and at end of input.
        }

        @Override
        public Collection<Committable> prepareCommit() {
            if (pending.isEmpty()) return List.of();
            List<Row> rows = new ArrayList<>(pending.values());
            rows.sort(KEY_ORDER);
            pending = new HashMap<>();
            return List.of(new Committable(rows));
        }

        @Override
        public void close() {}
    }

    /** Upserts the committables of completed checkpoints in one transaction, in one key order (no deadlocks). */
    static final class PostgresCommitter implements Committer<Committable> {
        private static final Logger LOG = LoggerFactory.getLogger(PostgresCommitter.class);
        private final PostgresTarget target;
        private final Counter committed;
        private final CommitPool pool;

        PostgresCommitter(PostgresTarget target, Counter committed) {
            this.target = target;
            this.committed = committed;
            this.pool = new CommitPool(target, 1);
        }

        @Override
        public void commit(Collection<CommitRequest<Committable>> requests) throws IOException {
            Map<WindowKey, Row> latest = new HashMap<>();
            for (CommitRequest<Committable> request : requests) {
                for (Row row : request.getCommittable().rows()) {
                    latest.merge(
                            row.attribution().key(), row, (old, neu) -> neu.revision() >= old.revision() ? neu : old);
                }
            }
            if (latest.isEmpty()) return;
            List<Row> rows = new ArrayList<>(latest.values());
            rows.sort(KEY_ORDER);
            try (Connection conn = pool.get().getConnection()) {
                conn.setAutoCommit(false);
                try {
                    List<Row> notApplied = StreamAttributionMetricsTable.upsert(conn, rows);
                    conn.commit();
                    committed.inc(rows.size() - notApplied.size());
                    if (!notApplied.isEmpty()) {
                        LOG.debug(
                                "{} attribution rows held back by the revision guard (a re-commit after a restore)",
                                notApplied.size());
                    }
                } catch (SQLException e) {
                    conn.rollback();
                    throw e;
                }
            } catch (SQLException e) {
                throw new IOException(
                        "committing " + rows.size() + " attribution rows to PostgreSQL (" + target + ") failed: "
                                + e.getMessage(),
                        e);
            }
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    /** Versioned, so committables in a retained checkpoint survive an upgrade of this class. */
    static final class Serializer implements SimpleVersionedSerializer<Committable> {
        static final int VERSION = 1;

        @Override
        public int getVersion() {
            return VERSION;
        }

        @Override
        public byte[] serialize(Committable c) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(64 + c.rows().size() * 96);
            out.writeInt(c.rows().size());
            for (Row row : c.rows()) {
                AttributionRow a = row.attribution();
                out.writeLong(a.key().windowStartMillis());
                out.writeLong(a.windowEndMillis());
                CommittableFields.writeString(out, a.key().campaignId());
                CommittableFields.writeString(out, a.key().channelId());
                out.writeLong(a.metrics().attributedClicks());
                out.writeLong(a.metrics().attributedConversions());
                out.writeLong(a.metrics().unattributedClicks());
                CommittableFields.writeSpend(out, a.metrics().attributedSpendMicros());
                out.writeInt(row.revision());
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public Committable deserialize(int version, byte[] bytes) throws IOException {
            if (version != VERSION) throw new IOException("unknown attribution committable version " + version);
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            int n = in.readInt();
            List<Row> rows = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long start = in.readLong();
                long end = in.readLong();
                String campaign = CommittableFields.readString(in);
                String channel = CommittableFields.readString(in);
                long attributed = in.readLong();
                long conversions = in.readLong();
                long unattributed = in.readLong();
                BigInteger spend = CommittableFields.readSpend(in);
                rows.add(new Row(
                        new AttributionRow(
                                new WindowKey(start, campaign, channel),
                                end,
                                new AttributionMetrics(attributed, conversions, unattributed, spend)),
                        in.readInt()));
            }
            return new Committable(rows);
        }
    }
}
