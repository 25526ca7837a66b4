package dev.recount.stream.sink;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
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
import java.util.TreeMap;
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
 * The exactly-once-effective PostgreSQL sink for the {@code stream_attribution_metrics} of every metric set with
 * attribution on (each set's own table, db's {@code StreamAttributionMetricsTable} of the set), the window metrics sink's
 * pattern ({@link WindowMetricsSink}): the writer keeps the latest revision per key between checkpoints and hands
 * them over as one committable per checkpoint; the committer upserts them once the checkpoint is complete, all in
 * one transaction. A retried commit (after a restore) changes nothing: the upsert's guard takes only a higher
 * revision with no fewer clicks and conversions.
 *
 * <p>Unlike the window metrics sink it records no lake progress and has no slow path for rows PostgreSQL refuses for
 * their content: every value is a count or a sum of costs the validator bounded, within the table's constraints.
 */
public final class AttributionMetricsSink
        implements Sink<SetAttributionRow>, SupportsCommitter<AttributionMetricsSink.Committable> {
    private static final long serialVersionUID = 2L;
    public static final String ROWS_COMMITTED_METRIC = "attributionRowsCommitted";

    private final PostgresTarget target;
    private final MetricSets sets;

    /** @param sets the sets whose tables rows go to (rows of a set no longer defined are not committed) */
    public AttributionMetricsSink(PostgresTarget target, MetricSets sets) {
        this.target = Objects.requireNonNull(target, "target");
        this.sets = Objects.requireNonNull(sets, "sets");
    }

    /** The rows of one writer subtask at one checkpoint. */
    public record Committable(List<SetAttributionRow> rows) {
        public Committable {
            rows = List.copyOf(rows);
        }
    }

    /** A row's identity: its set and its key. */
    record RowKey(String set, WindowKey key) {
        static RowKey of(SetAttributionRow r) {
            return new RowKey(r.set(), r.row().attribution().key());
        }
    }

    static final Comparator<SetAttributionRow> KEY_ORDER = Comparator.comparing(SetAttributionRow::set)
            .thenComparing(r -> r.row().attribution().key(), WindowMetricsWriter::compareKeys);

    static SetAttributionRow later(SetAttributionRow old, SetAttributionRow neu) {
        return neu.row().revision() >= old.row().revision() ? neu : old;
    }

    @Override
    public SinkWriter<SetAttributionRow> createWriter(WriterInitContext context) {
        return new Writer();
    }

    @Override
    public Committer<Committable> createCommitter(CommitterInitContext context) {
        return new PostgresCommitter(target, sets, context.metricGroup().counter(ROWS_COMMITTED_METRIC));
    }

    @Override
    public SimpleVersionedSerializer<Committable> getCommittableSerializer() {
        return new Serializer();
    }

    /** Latest revision per key since the last checkpoint; nothing reaches PostgreSQL before its checkpoint completes. */
    static final class Writer implements CommittingSinkWriter<SetAttributionRow, Committable> {
        private Map<RowKey, SetAttributionRow> pending = new HashMap<>();

        @Override
        public void write(SetAttributionRow row, Context context) {
            pending.merge(RowKey.of(row), row, AttributionMetricsSink::later);
        }

        @Override
        public void flush(boolean endOfInput) {
            // Rows leave with prepareCommit(), at every checkpoint and at end of input.
        }

        @Override
        public Collection<Committable> prepareCommit() {
            if (pending.isEmpty()) return List.of();
            List<SetAttributionRow> rows = new ArrayList<>(pending.values());
            rows.sort(KEY_ORDER);
            pending = new HashMap<>();
            return List.of(new Committable(rows));
        }

        @Override
        public void close() {}
    }

    /**
     * Upserts the committables of completed checkpoints in one transaction, each row into its set's table, in one
     * order of sets and keys (no deadlocks). Rows of a set the definitions no longer name are not written (logged).
     */
    static final class PostgresCommitter implements Committer<Committable> {
        private static final Logger LOG = LoggerFactory.getLogger(PostgresCommitter.class);
        private final PostgresTarget target;
        private final Map<String, StreamAttributionMetricsTable> tables = new HashMap<>();
        private final Counter committed;
        private final CommitPool pool;

        PostgresCommitter(PostgresTarget target, MetricSets sets, Counter committed) {
            this.target = target;
            for (MetricSet set : sets.sets()) {
                if (set.attribution()) tables.put(set.name(), new StreamAttributionMetricsTable(new SetTables(set)));
            }
            this.committed = committed;
            this.pool = new CommitPool(target, 1);
        }

        @Override
        public void commit(Collection<CommitRequest<Committable>> requests) throws IOException {
            Map<RowKey, SetAttributionRow> latest = new HashMap<>();
            for (CommitRequest<Committable> request : requests) {
                for (SetAttributionRow row : request.getCommittable().rows()) {
                    latest.merge(RowKey.of(row), row, AttributionMetricsSink::later);
                }
            }
            if (latest.isEmpty()) return;
            List<SetAttributionRow> sorted = new ArrayList<>(latest.values());
            sorted.sort(KEY_ORDER);
            Map<String, List<Row>> bySet = new TreeMap<>();
            for (SetAttributionRow r : sorted) {
                if (tables.containsKey(r.set()))
                    bySet.computeIfAbsent(r.set(), s -> new ArrayList<>()).add(r.row());
            }
            int rows = bySet.values().stream().mapToInt(List::size).sum();
            if (rows < sorted.size()) {
                LOG.warn(
                        "{} attribution rows of metric sets without attribution in the definitions are not committed",
                        sorted.size() - rows);
            }
            try (Connection conn = pool.get().getConnection()) {
                conn.setAutoCommit(false);
                try {
                    int notApplied = 0;
                    for (Map.Entry<String, List<Row>> e : bySet.entrySet()) {
                        notApplied += tables.get(e.getKey())
                                .upsert(conn, e.getValue())
                                .size();
                    }
                    conn.commit();
                    committed.inc(rows - notApplied);
                    if (notApplied > 0) {
                        LOG.debug(
                                "{} attribution rows held back by the revision guard (a re-commit after a restore)",
                                notApplied);
                    }
                } catch (SQLException e) {
                    conn.rollback();
                    throw e;
                }
            } catch (SQLException e) {
                throw new IOException(
                        "committing " + rows + " attribution rows to PostgreSQL (" + target + ") failed: "
                                + e.getMessage(),
                        e);
            }
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    /**
     * Versioned, so committables in a retained checkpoint survive an upgrade of this class. Version 2 (metric sets)
     * writes each row with its set's name and its dimension values with their count; version 1, the default set's rows
     * of the release before metric sets (campaign, channel), is still read.
     */
    static final class Serializer implements SimpleVersionedSerializer<Committable> {
        static final int VERSION_DEFAULT_ONLY = 1;
        static final int VERSION_SETS = 2;

        @Override
        public int getVersion() {
            return VERSION_SETS;
        }

        @Override
        public byte[] serialize(Committable c) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(64 + c.rows().size() * 96);
            out.writeInt(c.rows().size());
            for (SetAttributionRow row : c.rows()) {
                CommittableFields.writeString(out, row.set());
                SetAttributionRow.write(out, row.row().attribution());
                out.writeInt(row.row().revision());
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public Committable deserialize(int version, byte[] bytes) throws IOException {
            if (version != VERSION_DEFAULT_ONLY && version != VERSION_SETS) {
                throw new IOException("unknown attribution committable version " + version);
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            int n = in.readInt();
            List<SetAttributionRow> rows = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                if (version == VERSION_SETS) {
                    String set = CommittableFields.readString(in);
                    rows.add(new SetAttributionRow(set, new Row(SetAttributionRow.read(in), in.readInt())));
                } else {
                    rows.add(new SetAttributionRow(MetricSet.DEFAULT, readDefaultOnly(in)));
                }
            }
            return new Committable(rows);
        }

        private static Row readDefaultOnly(DataInputDeserializer in) throws IOException {
            long start = in.readLong();
            long end = in.readLong();
            String campaign = CommittableFields.readString(in);
            String channel = CommittableFields.readString(in);
            long attributed = in.readLong();
            long conversions = in.readLong();
            long unattributed = in.readLong();
            BigInteger spend = CommittableFields.readBig(in);
            return new Row(
                    new AttributionRow(
                            WindowKey.of(start, campaign, channel),
                            end,
                            new AttributionMetrics(attributed, conversions, unattributed, spend)),
                    in.readInt());
        }
    }
}
