package dev.recount.stream.sink;

import dev.recount.core.window.WindowKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * Buffers window results between checkpoints, keeping only the latest revision per (set, key), and hands them to the
 * committer as one committable per checkpoint. Nothing reaches PostgreSQL before its checkpoint completes.
 *
 * <p>Progress (how far the lake is complete) lags one checkpoint on purpose: the committable of checkpoint N
 * carries the watermark this writer had at checkpoint N-1. When checkpoint N completes, the lake's files of N-1
 * were committed already (normally when N-1 completed), so stream_progress never claims files that are not
 * visible yet. The mark of the last checkpoint is writer state, so it survives a restore.
 */
final class WindowMetricsWriter
        implements CommittingSinkWriter<SetWindowRow, WindowMetricsCommittable>,
                StatefulSinkWriter<SetWindowRow, ProgressMark> {
    /** One order of rows for every committer subtask: by set, window start, then dimension values. */
    static final Comparator<SetWindowRow> KEY_ORDER = Comparator.comparing(SetWindowRow::set)
            .thenComparing(r -> r.row().window().key(), WindowMetricsWriter::compareKeys);

    static int compareKeys(WindowKey a, WindowKey b) {
        int c = Long.compare(a.windowStartMillis(), b.windowStartMillis());
        for (int i = 0; c == 0 && i < a.dimensions().size(); i++)
            c = a.dimension(i).compareTo(b.dimension(i));
        return c;
    }

    /** A row's identity: its set and its key. */
    record RowKey(String set, WindowKey key) {
        static RowKey of(SetWindowRow r) {
            return new RowKey(r.set(), r.row().window().key());
        }
    }

    private Map<RowKey, SetWindowRow> pending = new HashMap<>();
    /** The highest real watermark seen; the end-of-input watermark (Long.MAX_VALUE) is not a real one. */
    private volatile long watermark = Long.MIN_VALUE;

    private long watermarkAtPrepare = Long.MIN_VALUE;
    private ProgressMark lastSnapshot;
    private ProgressMark lastEmitted;

    WindowMetricsWriter(MetricGroup metrics, ProgressMark restored) {
        this.lastSnapshot = restored;
        metrics.gauge("pendingRows", (Gauge<Integer>) () -> pending.size());
        metrics.gauge("currentWatermark", (Gauge<Long>) () -> watermark);
        // Wall clock minus event time: how far behind real time the results are.
        metrics.gauge("watermarkLagMs", (Gauge<Long>) () -> {
            long w = watermark;
            return w == Long.MIN_VALUE ? -1L : System.currentTimeMillis() - w;
        });
    }

    @Override
    public void write(SetWindowRow row, Context context) {
        pending.merge(RowKey.of(row), row, WindowMetricsWriter::later);
    }

    static SetWindowRow later(SetWindowRow old, SetWindowRow neu) {
        return neu.row().revision() >= old.row().revision() ? neu : old;
    }

    @Override
    public void writeWatermark(Watermark w) {
        long t = w.getTimestamp();
        if (t != Long.MAX_VALUE && t > watermark) watermark = t;
    }

    @Override
    public void flush(boolean endOfInput) {
        // Rows leave with prepareCommit(), which Flink calls at every checkpoint and at end of input.
    }

    @Override
    public Collection<WindowMetricsCommittable> prepareCommit() {
        List<SetWindowRow> rows = new ArrayList<>(pending.values());
        rows.sort(KEY_ORDER);
        pending = new HashMap<>();
        watermarkAtPrepare = watermark;
        boolean newProgress = lastSnapshot != null && !lastSnapshot.equals(lastEmitted);
        if (rows.isEmpty() && !newProgress) return List.of();
        lastEmitted = lastSnapshot;
        return List.of(new WindowMetricsCommittable(rows, lastSnapshot));
    }

    @Override
    public List<ProgressMark> snapshotState(long checkpointId) {
        if (watermarkAtPrepare != Long.MIN_VALUE) lastSnapshot = new ProgressMark(checkpointId, watermarkAtPrepare);
        return lastSnapshot == null ? List.of() : List.of(lastSnapshot);
    }

    @Override
    public void close() {}
}
