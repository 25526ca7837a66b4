package dev.recount.stream.types;

import dev.recount.core.event.AdEvent;
import dev.recount.stream.source.ParsedRecord;
import org.apache.flink.api.common.typeinfo.TypeInformation;

/** The type information the job's channels use for core's records (see streaming-job/README.md, serializers). */
public final class EventTypes {
    /** Valid events in flight: source → de-dup, source → lake, de-dup → attribution. Not for state. */
    public static final TypeInformation<AdEvent> AD_EVENT =
            new SerializerTypeInfo<>(AdEvent.class, new AdEventSerializer());

    /** The Kafka source's output (valid event or dead letter), handed to the chained validation step. */
    public static final TypeInformation<ParsedRecord> PARSED_RECORD =
            new SerializerTypeInfo<>(ParsedRecord.class, new ParsedRecordSerializer());

    private EventTypes() {}
}
