package dev.recount.stream.lake;

import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeLayout;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * The raw event lake's Parquet schema, as an Avro record with exactly these columns (names from core's
 * {@link LakeLayout}, which the batch layer reads by): event_id string, event_type string, event_ts long (epoch
 * ms), campaign_id string, channel_id string, cost_micros long, kafka_topic string, kafka_partition int,
 * kafka_offset long, record_ts long. All required.
 */
public final class LakeSchema {
    public static final Schema SCHEMA = SchemaBuilder.record("raw_event").namespace("dev.recount.lake").fields()
            .requiredString(LakeLayout.EVENT_ID)
            .requiredString(LakeLayout.EVENT_TYPE)
            .requiredLong(LakeLayout.EVENT_TS)
            .requiredString(LakeLayout.CAMPAIGN_ID)
            .requiredString(LakeLayout.CHANNEL_ID)
            .requiredLong(LakeLayout.COST_MICROS)
            .requiredString(LakeLayout.KAFKA_TOPIC)
            .requiredInt(LakeLayout.KAFKA_PARTITION)
            .requiredLong(LakeLayout.KAFKA_OFFSET)
            .requiredLong(LakeLayout.RECORD_TS)
            .endRecord();

    private static final int EVENT_ID = SCHEMA.getField(LakeLayout.EVENT_ID).pos();
    private static final int EVENT_TYPE = SCHEMA.getField(LakeLayout.EVENT_TYPE).pos();
    private static final int EVENT_TS = SCHEMA.getField(LakeLayout.EVENT_TS).pos();
    private static final int CAMPAIGN_ID = SCHEMA.getField(LakeLayout.CAMPAIGN_ID).pos();
    private static final int CHANNEL_ID = SCHEMA.getField(LakeLayout.CHANNEL_ID).pos();
    private static final int COST_MICROS = SCHEMA.getField(LakeLayout.COST_MICROS).pos();
    private static final int KAFKA_TOPIC = SCHEMA.getField(LakeLayout.KAFKA_TOPIC).pos();
    private static final int KAFKA_PARTITION = SCHEMA.getField(LakeLayout.KAFKA_PARTITION).pos();
    private static final int KAFKA_OFFSET = SCHEMA.getField(LakeLayout.KAFKA_OFFSET).pos();
    private static final int RECORD_TS = SCHEMA.getField(LakeLayout.RECORD_TS).pos();

    private LakeSchema() {}

    /** Fills {@code reuse} (a record of {@link #SCHEMA}) with {@code e}; the Parquet writer copies values at once. */
    public static GenericRecord fill(GenericData.Record reuse, AdEvent e) {
        reuse.put(EVENT_ID, e.eventId);
        reuse.put(EVENT_TYPE, e.eventType.wireName());
        reuse.put(EVENT_TS, e.eventTs);
        reuse.put(CAMPAIGN_ID, e.campaignId);
        reuse.put(CHANNEL_ID, e.channelId);
        reuse.put(COST_MICROS, e.costMicros);
        reuse.put(KAFKA_TOPIC, e.topic);
        reuse.put(KAFKA_PARTITION, e.partition);
        reuse.put(KAFKA_OFFSET, e.offset);
        reuse.put(RECORD_TS, e.recordTs);
        return reuse;
    }
}
