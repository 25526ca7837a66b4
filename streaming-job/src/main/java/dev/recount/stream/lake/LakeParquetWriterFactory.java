package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeLayout;
import java.io.IOException;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.formats.parquet.ParquetBuilder;
import org.apache.flink.formats.parquet.ParquetWriterFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.OutputFile;

/** Writes {@link AdEvent}s as Parquet files of the {@link LakeSchema}, Snappy-compressed. */
public final class LakeParquetWriterFactory implements BulkWriter.Factory<AdEvent> {
    private static final long serialVersionUID = 2L;

    private final ParquetWriterFactory<AdEvent> parquet = new ParquetWriterFactory<>(new Builder());

    @Override
    public BulkWriter<AdEvent> create(FSDataOutputStream out) throws IOException {
        return parquet.create(out);
    }

    private static final class Builder implements ParquetBuilder<AdEvent> {
        private static final long serialVersionUID = 1L;

        @Override
        public ParquetWriter<AdEvent> createWriter(OutputFile out) throws IOException {
            return new WriterBuilder(out)
                    .withCompressionCodec(CompressionCodecName.SNAPPY)
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
                    // Min/max of random ids prune nothing; event_ts keeps its statistics (time-range pruning).
                    .withStatisticsEnabled(LakeLayout.EVENT_ID, false)
                    .withSizeStatisticsEnabled(LakeLayout.EVENT_ID, false)
                    .withStatisticsEnabled(LakeLayout.REQUEST_ID, false)
                    .withSizeStatisticsEnabled(LakeLayout.REQUEST_ID, false)
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
