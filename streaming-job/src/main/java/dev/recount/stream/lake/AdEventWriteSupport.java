package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeColumns;
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
    // Field positions from core's column list, so the indices below can never drift from the schema's order.
    private static final int EVENT_ID = LakeColumns.indexOf(LakeLayout.EVENT_ID);
    private static final int EVENT_TYPE = LakeColumns.indexOf(LakeLayout.EVENT_TYPE);
    private static final int EVENT_TS = LakeColumns.indexOf(LakeLayout.EVENT_TS);
    private static final int CAMPAIGN_ID = LakeColumns.indexOf(LakeLayout.CAMPAIGN_ID);
    private static final int CHANNEL_ID = LakeColumns.indexOf(LakeLayout.CHANNEL_ID);
    private static final int COST_MICROS = LakeColumns.indexOf(LakeLayout.COST_MICROS);
    private static final int KAFKA_TOPIC = LakeColumns.indexOf(LakeLayout.KAFKA_TOPIC);
    private static final int KAFKA_PARTITION = LakeColumns.indexOf(LakeLayout.KAFKA_PARTITION);
    private static final int KAFKA_OFFSET = LakeColumns.indexOf(LakeLayout.KAFKA_OFFSET);
    private static final int RECORD_TS = LakeColumns.indexOf(LakeLayout.RECORD_TS);
    private static final int REQUEST_ID = LakeColumns.indexOf(LakeLayout.REQUEST_ID);

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
        string(EVENT_ID, LakeLayout.EVENT_ID, e.eventId);
        string(EVENT_TYPE, LakeLayout.EVENT_TYPE, e.eventType.wireName());
        int64(EVENT_TS, LakeLayout.EVENT_TS, e.eventTs);
        string(CAMPAIGN_ID, LakeLayout.CAMPAIGN_ID, e.campaignId);
        string(CHANNEL_ID, LakeLayout.CHANNEL_ID, e.channelId);
        int64(COST_MICROS, LakeLayout.COST_MICROS, e.costMicros);
        string(KAFKA_TOPIC, LakeLayout.KAFKA_TOPIC, e.topic);
        out.startField(LakeLayout.KAFKA_PARTITION, KAFKA_PARTITION);
        out.addInteger(e.partition);
        out.endField(LakeLayout.KAFKA_PARTITION, KAFKA_PARTITION);
        int64(KAFKA_OFFSET, LakeLayout.KAFKA_OFFSET, e.offset);
        int64(RECORD_TS, LakeLayout.RECORD_TS, e.recordTs);
        // optional: an absent field is null
        if (e.requestId != null) string(REQUEST_ID, LakeLayout.REQUEST_ID, e.requestId);
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
