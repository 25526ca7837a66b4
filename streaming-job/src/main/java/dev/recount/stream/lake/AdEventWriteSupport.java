package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.lake.LakeColumns;
import dev.recount.core.lake.LakeLayout;
import java.nio.charset.StandardCharsets;
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
    private static final int ATTRIBUTES = LakeColumns.indexOf(LakeLayout.ATTRIBUTES);

    /**
     * The event types' names, encoded once: the type and the topic repeat on every row, and encoding them to UTF-8
     * per event was ~5 % of the thread that writes the lake.
     */
    private static final Binary[] EVENT_TYPE_NAMES = eventTypeNames();

    private RecordConsumer out;
    /** The topic of the previous event and its encoding (a subtask reads one or a few topics). */
    private String lastTopic;

    private Binary lastTopicBinary;

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
        binary(EVENT_TYPE, LakeLayout.EVENT_TYPE, EVENT_TYPE_NAMES[e.eventType.ordinal()]);
        int64(EVENT_TS, LakeLayout.EVENT_TS, e.eventTs);
        string(CAMPAIGN_ID, LakeLayout.CAMPAIGN_ID, e.campaignId);
        string(CHANNEL_ID, LakeLayout.CHANNEL_ID, e.channelId);
        int64(COST_MICROS, LakeLayout.COST_MICROS, e.costMicros);
        binary(KAFKA_TOPIC, LakeLayout.KAFKA_TOPIC, topic(e.topic));
        out.startField(LakeLayout.KAFKA_PARTITION, KAFKA_PARTITION);
        out.addInteger(e.partition);
        out.endField(LakeLayout.KAFKA_PARTITION, KAFKA_PARTITION);
        int64(KAFKA_OFFSET, LakeLayout.KAFKA_OFFSET, e.offset);
        int64(RECORD_TS, LakeLayout.RECORD_TS, e.recordTs);
        // optional: an absent field is null
        if (e.requestId != null) string(REQUEST_ID, LakeLayout.REQUEST_ID, e.requestId);
        // every field beyond the contract as the record had it, declared or not; null when there were none
        if (e.attributesJson != null) string(ATTRIBUTES, LakeLayout.ATTRIBUTES, e.attributesJson);
        out.endMessage();
    }

    private Binary topic(String topic) {
        if (!topic.equals(lastTopic)) {
            lastTopic = topic;
            lastTopicBinary = Binary.fromString(topic);
        }
        return lastTopicBinary;
    }

    private void string(int index, String field, String value) {
        binary(index, field, Binary.fromString(value));
    }

    private void binary(int index, String field, Binary value) {
        out.startField(field, index);
        out.addBinary(value);
        out.endField(field, index);
    }

    private static Binary[] eventTypeNames() {
        EventType[] types = EventType.values();
        Binary[] names = new Binary[types.length];
        for (EventType t : types) {
            names[t.ordinal()] = Binary.fromConstantByteArray(t.wireName().getBytes(StandardCharsets.UTF_8));
        }
        return names;
    }

    private void int64(int index, String field, long value) {
        out.startField(field, index);
        out.addLong(value);
        out.endField(field, index);
    }
}
