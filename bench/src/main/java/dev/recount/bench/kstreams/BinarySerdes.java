package dev.recount.bench.kstreams;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import dev.recount.core.metrics.MetricsAccumulator;
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
    private static final int ACCUMULATOR_LONGS = new MetricsAccumulator().sums.length;

    private BinarySerdes() {}

    static Serde<AdEvent> events() {
        return Serdes.serdeFrom(EVENT_SERIALIZER, EVENT_DESERIALIZER);
    }

    static Serde<MetricsAccumulator> accumulators() {
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

    private static final Serializer<MetricsAccumulator> ACCUMULATOR_SERIALIZER = (topic, acc) -> {
        if (acc == null) return null;
        ByteBuffer b = ByteBuffer.allocate(8 * (ACCUMULATOR_LONGS + 1));
        for (long sum : acc.sums) b.putLong(sum);
        return b.putLong(acc.spendCarry).array();
    };

    private static final Deserializer<MetricsAccumulator> ACCUMULATOR_DESERIALIZER = (topic, bytes) -> {
        if (bytes == null) return null;
        ByteBuffer b = ByteBuffer.wrap(bytes);
        MetricsAccumulator acc = new MetricsAccumulator();
        for (int i = 0; i < ACCUMULATOR_LONGS; i++) acc.sums[i] = b.getLong();
        acc.spendCarry = b.getLong();
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
