package dev.recount.stream.types;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.InvalidReason;
import dev.recount.stream.source.DeadLetter;
import dev.recount.stream.source.ParsedRecord;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.junit.jupiter.api.Test;

/** Flink's contract suite for the source's output: valid events, and dead letters with and without a key. */
class ParsedRecordSerializerTest extends SerializerTestBase<ParsedRecord> {
    @Override
    protected TypeSerializer<ParsedRecord> createSerializer() {
        return new ParsedRecordSerializer();
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<ParsedRecord> getTypeClass() {
        return ParsedRecord.class;
    }

    @Override
    protected ParsedRecord[] getTestData() {
        AdEvent[] events = new AdEventSerializerTest().getTestData();
        return new ParsedRecord[] {
            ParsedRecord.valid(events[0]),
            ParsedRecord.valid(events[2]),
            ParsedRecord.valid(events[events.length - 1]),
            ParsedRecord.invalid(new DeadLetter(InvalidReason.MALFORMED, "{\"raw\":\"\u0000\uD800\"}", null)),
            ParsedRecord.invalid(new DeadLetter(InvalidReason.TIMESTAMP, "{}", new byte[0])),
            ParsedRecord.invalid(new DeadLetter(InvalidReason.SCHEMA, "{}", new byte[] {0, -1, 127}))
        };
    }

    @Test
    void aCopyHasItsOwnEventSoChainedOperatorsCannotSeeEachOthersChanges() {
        ParsedRecord original = getTestData()[0];
        ParsedRecord copy = new ParsedRecordSerializer().copy(original);
        copy.event.costMicros = -1;
        assertThat(original.event.costMicros).isEqualTo(1_234_567L);
    }
}
