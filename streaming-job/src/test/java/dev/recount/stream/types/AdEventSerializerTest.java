package dev.recount.stream.types;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * Flink's contract suite for serializers (copy, serialize alone and in sequence, serialized copy, duplicate,
 * snapshot and restore), over events with hostile strings and null fields, plus the codec's own edges.
 */
class AdEventSerializerTest extends SerializerTestBase<AdEvent> {
    /** Strings modified UTF-8 or a UTF-8 round trip would change: NUL, lone surrogates, both halves swapped. */
    static final String[] HOSTILE = {
        "",
        "\u0000",
        "a\u0000b",
        "\uD800",
        "\uDFFF",
        "x\uDC00\uD800y",
        "\uD83D\uDE00 emoji",
        "caf\u00E9",
        "\u00FF\u0080\u007F",
        "\uFFFF\uFFFE",
        "ascii-only-id-0123456789",
        "w".repeat(70_000) + "\u0100"
    };

    @Override
    protected TypeSerializer<AdEvent> createSerializer() {
        return new AdEventSerializer();
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<AdEvent> getTypeClass() {
        return AdEvent.class;
    }

    @Override
    protected AdEvent[] getTestData() {
        AdEvent allNull = new AdEvent();
        allNull.eventTs = Long.MIN_VALUE;
        allNull.offset = Long.MAX_VALUE;
        allNull.partition = Integer.MIN_VALUE;
        AdEvent[] data = new AdEvent[HOSTILE.length + 3];
        data[0] = event("e-1", EventType.IMPRESSION, "c-1", "ch-1", null, "ad-events");
        data[1] = event("e-2", EventType.CONVERSION, "c-2", "ch-2", "r-1", "ad-events");
        data[2] = allNull;
        for (int i = 0; i < HOSTILE.length; i++) {
            String s = HOSTILE[i];
            data[3 + i] = event(s, EventType.values()[i % 3], s, s + s, i % 2 == 0 ? null : s, s);
            // The fields beyond the contract: the raw JSON as any string, declared values, empty and absent arrays.
            if (i % 3 == 0) data[3 + i].withAttributes(new String[] {s, "DE"}, new long[] {0, Long.MAX_VALUE}, s);
            if (i % 3 == 1) data[3 + i].withAttributes(new String[0], new long[0], null);
        }
        return data;
    }

    private static AdEvent event(
            String id, EventType type, String campaign, String channel, String request, String topic) {
        return new AdEvent(
                id,
                type,
                1_764_374_400_000L,
                campaign,
                channel,
                1_234_567L,
                request,
                topic,
                2,
                41L,
                1_764_374_401_000L);
    }

    @Test
    void everyHostileStringRoundTripsExactly() throws IOException {
        CompactStrings codec = new CompactStrings();
        DataOutputSerializer out = new DataOutputSerializer(16);
        for (String s : HOSTILE) codec.write(s, out);
        codec.write(null, out);
        DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
        for (String s : HOSTILE) assertThat(codec.read(in)).isEqualTo(s);
        assertThat(codec.read(in)).isNull();
        assertThat(in.available()).isZero();
    }

    @Test
    void anAsciiStringTakesOneBytePerCharacterAfterItsHeader() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(16);
        new CompactStrings().write("0123456789", out);
        assertThat(out.length()).isEqualTo(1 + 10);
    }

    @Test
    void aCorruptEventTypeIsAnErrorNotAnotherType() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        new AdEventSerializer().serialize(getTestData()[0], out);
        byte[] bytes = out.getCopyOfBuffer();
        bytes[1 + "e-1".length()] = 9; // the event type's byte, after the id's header and three characters
        assertThatThrownBy(() -> new AdEventSerializer().deserialize(new DataInputDeserializer(bytes)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("event type code 9");
    }

    /**
     * A snapshot of the release before metric sets (format 1, no attributes; its own serializer wrote it and an event,
     * see src/test/resources/previous-release) restores a serializer that reads that event, and today's serializer
     * answers that state of that format would need a migration, not that it is incompatible.
     */
    @Test
    void aSnapshotOfThePreviousFormatStillReadsItsEvents() throws Exception {
        DataInputDeserializer snapshotBytes =
                new DataInputDeserializer(previousRelease("ad-event-serializer-v1.snapshot"));
        TypeSerializerSnapshot<AdEvent> old = TypeSerializerSnapshot.readVersionedSnapshot(
                snapshotBytes, getClass().getClassLoader());

        AdEvent read =
                old.restoreSerializer().deserialize(new DataInputDeserializer(previousRelease("ad-event-v1.bin")));

        AdEvent expected = new AdEvent(
                "e-1",
                EventType.CLICK,
                1_795_946_407_000L,
                "camp-a",
                "search",
                250_000,
                "req-1",
                "ad-events-test",
                0,
                42,
                1_795_946_408_000L);
        assertThat(read).isEqualTo(expected);
        assertThat(read.attributesJson).isNull();
        TypeSerializerSchemaCompatibility<AdEvent> compatibility =
                new AdEventSerializer().snapshotConfiguration().resolveSchemaCompatibility(old);
        assertThat(compatibility.isCompatibleAfterMigration()).isTrue();
    }

    private static byte[] previousRelease(String file) throws Exception {
        return Files.readAllBytes(Path.of(AdEventSerializerTest.class
                .getResource("/previous-release/" + file)
                .toURI()));
    }
}
