package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeLayout;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;

/**
 * Writes an {@link AdEvent} straight into Parquet's record consumer, column by column in {@link LakeSchema}'s
 * order. Going through Avro generic records instead (AvroWriteSupport) cost a record fill and a schema-driven
 * type dispatch per field, per event, in the job's busiest task (docs/benchmarks.md §6).
 */
final class AdEventWriteSupport extends WriteSupport<AdEvent> {
    private RecordConsumer out;

    @Override
    public WriteContext init(Configuration configuration) {
        return new WriteContext(LakeSchema.SCHEMA, Map.of());
    }

    @Override
    public void prepareForWrite(RecordConsumer recordConsumer) {
        this.out = recordConsumer;
    }

    @Override
    public void write(AdEvent e) {
        out.startMessage();
        string(0, LakeLayout.EVENT_ID, e.eventId);
        string(1, LakeLayout.EVENT_TYPE, e.eventType.wireName());
        int64(2, LakeLayout.EVENT_TS, e.eventTs);
        string(3, LakeLayout.CAMPAIGN_ID, e.campaignId);
        string(4, LakeLayout.CHANNEL_ID, e.channelId);
        int64(5, LakeLayout.COST_MICROS, e.costMicros);
        string(6, LakeLayout.KAFKA_TOPIC, e.topic);
        out.startField(LakeLayout.KAFKA_PARTITION, 7);
        out.addInteger(e.partition);
        out.endField(LakeLayout.KAFKA_PARTITION, 7);
        int64(8, LakeLayout.KAFKA_OFFSET, e.offset);
        int64(9, LakeLayout.RECORD_TS, e.recordTs);
        if (e.requestId != null) string(10, LakeLayout.REQUEST_ID, e.requestId); // optional: an absent field is null
        out.endMessage();
    }

    private void string(int index, String field, String value) {
        out.startField(field, index);
        out.addBinary(Binary.fromString(value));
        out.endField(field, index);
    }

    private void int64(int index, String field, long value) {
        out.startField(field, index);
        out.addLong(value);
        out.endField(field, index);
    }
}
