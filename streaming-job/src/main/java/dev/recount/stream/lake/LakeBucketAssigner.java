package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeLayout;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.SimpleVersionedStringSerializer;

/**
 * The lake directory of an event: core's {@link LakeLayout#partitionPath} (event_date=YYYY-MM-DD/event_hour=HH,
 * UTC, by event time). Consecutive events mostly fall into the same hour, so the last hour's path is remembered
 * instead of formatting a date per event; its hour is {@link LakeLayout#hourStart}.
 */
public final class LakeBucketAssigner implements BucketAssigner<AdEvent, String> {
    private static final long serialVersionUID = 1L;

    private transient long cachedHour = Long.MIN_VALUE;
    private transient String cachedPath;

    @Override
    public String getBucketId(AdEvent event, Context context) {
        long hour = LakeLayout.hourStart(event.eventTs);
        if (hour != cachedHour || cachedPath == null) {
            cachedPath = LakeLayout.partitionPath(event.eventTs);
            cachedHour = hour;
        }
        return cachedPath;
    }

    @Override
    public SimpleVersionedSerializer<String> getSerializer() {
        return SimpleVersionedStringSerializer.INSTANCE;
    }
}
