package dev.recount.bench.kstreams;

import dev.recount.bench.DefaultSet;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.sets.MeasureSums;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Compact binary serdes for what crosses the repartition topics and the window store: a user tuning for throughput
 * writes these rather than JSON (Flink's POJO serializer is binary too, so neither side pays for text).
 *
 * <p>An event carries only what the window metrics need: id, type, event time, campaign, channel, cost. Request id
 * and the Kafka coordinates stay behind (this job has no lake and no attribution).
 */
final class BinarySerdes {
    private static final EventType[] TYPES = EventType.values();
    private static final int MEASURES = DefaultSet.SET.measures().size();

    private BinarySerdes() {}

    static Serde<AdEvent> events() {
        return Serdes.serdeFrom(EVENT_SERIALIZER, EVENT_DESERIALIZER);
    }

    /** The default set's running sums: every slot, then every carry (the set sums spend_micros, so it has them). */
    static Serde<MeasureSums> accumulators() {
        return Serdes.serdeFrom(ACCUMULATOR_SERIALIZER, ACCUMULATOR_DESERIALIZER);
    }

    private static final Serializer<AdEvent> EVENT_SERIALIZER = (topic, e) -> {
        if (e == null) return null;
        byte[] id = e.eventId.getBytes(StandardCharsets.UTF_8);
        byte[] campaign = e.campaignId.getBytes(StandardCharsets.UTF_8);
        byte[] channel = e.channelId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(1 + 8 + 8 + 3 * 4 + id.length + campaign.length + channel.length);
        b.put((byte) e.eventType.ordinal()).putLong(e.eventTs).putLong(e.costMicros);
        putBytes(b, id);
        putBytes(b, campaign);
        putBytes(b, channel);
        return b.array();
    };

    private static final Deserializer<AdEvent> EVENT_DESERIALIZER = (topic, bytes) -> {
        if (bytes == null) return null;
        ByteBuffer b = ByteBuffer.wrap(bytes);
        AdEvent e = new AdEvent();
        e.eventType = TYPES[b.get()];
        e.eventTs = b.getLong();
        e.costMicros = b.getLong();
        e.eventId = getString(b);
        e.campaignId = getString(b);
        e.channelId = getString(b);
        return e;
    };

    private static final Serializer<MeasureSums> ACCUMULATOR_SERIALIZER = (topic, acc) -> {
        if (acc == null) return null;
        ByteBuffer b = ByteBuffer.allocate(8 * 2 * MEASURES);
        for (long sum : acc.sums) b.putLong(sum);
        for (long carry : acc.carries) b.putLong(carry);
        return b.array();
    };

    private static final Deserializer<MeasureSums> ACCUMULATOR_DESERIALIZER = (topic, bytes) -> {
        if (bytes == null) return null;
        ByteBuffer b = ByteBuffer.wrap(bytes);
        MeasureSums acc = DefaultSet.SET.newSums();
        for (int i = 0; i < MEASURES; i++) acc.sums[i] = b.getLong();
        for (int i = 0; i < MEASURES; i++) acc.carries[i] = b.getLong();
        return acc;
    };

    private static void putBytes(ByteBuffer b, byte[] bytes) {
        b.putInt(bytes.length).put(bytes);
    }

    private static String getString(ByteBuffer b) {
        int length = b.getInt();
        String s = new String(b.array(), b.position(), length, StandardCharsets.UTF_8);
        b.position(b.position() + length);
        return s;
    }
}
