package dev.recount.stream.types;

import dev.recount.core.event.AdEvent;
import org.apache.flink.api.common.typeinfo.TypeInformation;

/** The type information the job's channels use for core's records (see streaming-job/README.md, serializers). */
public final class EventTypes {
    /** Valid events in flight: source → de-dup (whose input the lake writer, chained, also gets), de-dup → attribution. Not for state. */
    public static final TypeInformation<AdEvent> AD_EVENT =
            new SerializerTypeInfo<>(AdEvent.class, new AdEventSerializer());

    private EventTypes() {}
}
