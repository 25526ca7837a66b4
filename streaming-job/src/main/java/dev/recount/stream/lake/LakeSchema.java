package dev.recount.stream.lake;

import static org.apache.parquet.schema.LogicalTypeAnnotation.stringType;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BINARY;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT32;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT64;

import dev.recount.core.lake.LakeLayout;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Types;

/**
 * The raw event lake's Parquet schema, exactly these columns in this order (names from core's {@link LakeLayout},
 * which the batch layer reads by): event_id string, event_type string, event_ts int64 (epoch ms), campaign_id
 * string, channel_id string, cost_micros int64, kafka_topic string, kafka_partition int32, kafka_offset int64,
 * record_ts int64, request_id string. All required but request_id, which is optional (null when the event had none)
 * and last, so files written before it existed are a prefix of this schema; strings are UTF-8 {@code binary (STRING)}.
 */
public final class LakeSchema {
    public static final MessageType SCHEMA = Types.buildMessage()
            .required(BINARY).as(stringType()).named(LakeLayout.EVENT_ID)
            .required(BINARY).as(stringType()).named(LakeLayout.EVENT_TYPE)
            .required(INT64).named(LakeLayout.EVENT_TS)
            .required(BINARY).as(stringType()).named(LakeLayout.CAMPAIGN_ID)
            .required(BINARY).as(stringType()).named(LakeLayout.CHANNEL_ID)
            .required(INT64).named(LakeLayout.COST_MICROS)
            .required(BINARY).as(stringType()).named(LakeLayout.KAFKA_TOPIC)
            .required(INT32).named(LakeLayout.KAFKA_PARTITION)
            .required(INT64).named(LakeLayout.KAFKA_OFFSET)
            .required(INT64).named(LakeLayout.RECORD_TS)
            .optional(BINARY).as(stringType()).named(LakeLayout.REQUEST_ID)
            .named("raw_event");

    private LakeSchema() {}
}
