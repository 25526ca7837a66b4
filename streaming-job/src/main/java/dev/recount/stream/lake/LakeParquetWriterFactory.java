package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeLayout;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.formats.parquet.ParquetBuilder;
import org.apache.flink.formats.parquet.ParquetWriterFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.OutputFile;

/**
 * Writes {@link AdEvent}s as Parquet files of the {@link LakeSchema}, Snappy-compressed.
 *
 * <p><b>One open file per lake hour, whatever the input.</b> The sink keeps a file open for every hour it received an
 * event in since the last checkpoint. Valid events may fall in any hour of {@code validation.max-past} (a week: 169
 * hours), and in any hour at all where the broker accepts any record timestamp (Kafka's default for past ones). With a
 * Parquet writer per open file (≈ 2.3 MB of heap each with Parquet's 1 MB pages) a thousand events, each in its own
 * hour, ran a task out of heap, and every restore read them again. So a file's Parquet writer is made only once the
 * file holds {@link #WRITER_AFTER_EVENTS} events (or when it is finished); until then its events are kept as they
 * are, a few hundred bytes each. Pages are {@link #PAGE_BYTES} and the writers share one empty Hadoop
 * configuration, so a writer costs ≈ 0.25 MB: the heap then grows with the events between two checkpoints, as the
 * rest of the job's state does, never with the number of hours they fall in.
 */
public final class LakeParquetWriterFactory implements BulkWriter.Factory<AdEvent> {
    private static final long serialVersionUID = 3L;

    /** Events a file holds before it gets a Parquet writer: about as much heap as the writer would take. */
    static final int WRITER_AFTER_EVENTS = 1024;

    /**
     * Parquet's page size. A writer allocates buffers of a page up front (its compressor's output buffer among them):
     * 2.0 of a writer's 2.3 MB at the default 1 MB, measured from a heap histogram of 300 open writers. Snappy
     * compresses in 64 KB blocks anyway, and smaller pages only prune finer.
     */
    static final int PAGE_BYTES = 128 * 1024;

    private final ParquetWriterFactory<AdEvent> parquet = new ParquetWriterFactory<>(new Builder());

    @Override
    public BulkWriter<AdEvent> create(FSDataOutputStream out) {
        return new DeferredWriter(out);
    }

    /** Holds a file's first events and makes its Parquet writer only when there are enough of them to pay for it. */
    private final class DeferredWriter implements BulkWriter<AdEvent> {
        private final FSDataOutputStream out;
        private List<AdEvent> held = new ArrayList<>();
        private BulkWriter<AdEvent> writer;

        DeferredWriter(FSDataOutputStream out) {
            this.out = out;
        }

        @Override
        public void addElement(AdEvent event) throws IOException {
            if (writer != null) {
                writer.addElement(event);
                return;
            }
            // A copy: with object reuse the caller refills the same instance for its next event.
            held.add(event.copy());
            if (held.size() >= WRITER_AFTER_EVENTS) open();
        }

        private void open() throws IOException {
            writer = parquet.create(out);
            for (AdEvent e : held) writer.addElement(e);
            held = null;
        }

        @Override
        public void flush() throws IOException {
            if (writer != null) writer.flush();
        }

        @Override
        public void finish() throws IOException {
            if (writer == null) open();
            writer.finish();
        }
    }

    private static final class Builder implements ParquetBuilder<AdEvent> {
        private static final long serialVersionUID = 1L;

        /**
         * Read-only, shared by the subtask's writers: without it each writer loads Hadoop's defaults into a
         * configuration of its own (≈ 0.1 MB and an XML parse per file), none of which the lake's writer reads. So
         * {@code parquet.*} settings in a core-site.xml on the TaskManager's classpath (encryption, say) do not reach
         * it either; recount sets none, and the lake's format is this class's to decide.
         */
        private transient Configuration conf;

        @Override
        public ParquetWriter<AdEvent> createWriter(OutputFile out) throws IOException {
            if (conf == null) conf = new Configuration(false);
            return new WriterBuilder(out)
                    .withConf(conf)
                    .withCompressionCodec(CompressionCodecName.SNAPPY)
                    .withPageSize(PAGE_BYTES)
                    // Columns (nearly) unique per event gain nothing from a dictionary: Parquet would fill one
                    // per row group and then fall back to plain anyway. Building it was ~10 % of the source
                    // task's CPU (docs/benchmarks.md §6). Costs are auction prices, thousands of distinct values
                    // per file: their dictionary lookups were ~8 % of the thread writing the lake, for files
                    // ~4 % smaller. The low-cardinality columns keep theirs.
                    .withDictionaryEncoding(LakeLayout.EVENT_ID, false)
                    .withDictionaryEncoding(LakeLayout.REQUEST_ID, false)
                    .withDictionaryEncoding(LakeLayout.EVENT_TS, false)
                    .withDictionaryEncoding(LakeLayout.KAFKA_OFFSET, false)
                    .withDictionaryEncoding(LakeLayout.RECORD_TS, false)
                    .withDictionaryEncoding(LakeLayout.COST_MICROS, false)
                    // Min/max of random ids prune nothing, and neither do those of the short strings that repeat
                    // in every row group (every campaign, channel and type is in each one; a reader filtering on
                    // them prunes by the dictionary instead): comparing each value with both was ~3 % of the thread
                    // writing the lake (docs/benchmarks.md §6). event_ts keeps its statistics (time-range pruning),
                    // and the numbers theirs (cheap). Compacted files get all of them again (HourRewrite).
                    .withStatisticsEnabled(LakeLayout.EVENT_ID, false)
                    .withSizeStatisticsEnabled(LakeLayout.EVENT_ID, false)
                    .withStatisticsEnabled(LakeLayout.REQUEST_ID, false)
                    .withSizeStatisticsEnabled(LakeLayout.REQUEST_ID, false)
                    .withStatisticsEnabled(LakeLayout.CAMPAIGN_ID, false)
                    .withStatisticsEnabled(LakeLayout.CHANNEL_ID, false)
                    .withStatisticsEnabled(LakeLayout.EVENT_TYPE, false)
                    .withStatisticsEnabled(LakeLayout.KAFKA_TOPIC, false)
                    .build();
        }
    }

    private static final class WriterBuilder extends ParquetWriter.Builder<AdEvent, WriterBuilder> {
        WriterBuilder(OutputFile out) {
            super(out);
        }

        @Override
        protected WriterBuilder self() {
            return this;
        }

        @Override
        protected WriteSupport<AdEvent> getWriteSupport(Configuration conf) {
            return new AdEventWriteSupport();
        }
    }
}
