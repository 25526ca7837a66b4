package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputFileConfig;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;

/**
 * The raw event lake (CONTRACT §3): every valid event as Parquet under {@code <lake>/event_date=.../event_hour=.../
 * part-*.parquet}. Files roll on every checkpoint and become visible (renamed from hidden in-progress files) only
 * when that checkpoint completes, so each event appears exactly once in the committed files.
 */
public final class LakeSink {
    private LakeSink() {}

    /** @param lakeUri a URI (file:///..., s3a://..., hdfs://...) */
    public static FileSink<AdEvent> create(String lakeUri) {
        return FileSink.forBulkFormat(new Path(lakeUri), new LakeParquetWriterFactory())
                .withBucketAssigner(new LakeBucketAssigner())
                .withRollingPolicy(OnCheckpointRollingPolicy.build())
                .withOutputFileConfig(OutputFileConfig.builder()
                        .withPartPrefix("part")
                        .withPartSuffix(".parquet")
                        .build())
                .build();
    }
}
