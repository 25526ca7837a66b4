package dev.recount.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.EventType;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A backfill record read back: what the stream wrote round-trips; anything that breaks the event rules is refused. */
class BackfillRecordTest {
    static final long TS = Instant.parse("2026-11-28T10:00:01Z").toEpochMilli();
    static final String GOOD = new BackfillRecord(
                    new AdEvent("e1", EventType.CLICK, TS, "c1", "ch1", 20, "r1", "events", 1, 7, TS + 1),
                    List.of(new BackfillRecord.SetWindow("default", TS - 1_000, TS + 59_000)),
                    TS + 3_600_000,
                    "events",
                    1,
                    7)
            .toJson();

    @Test
    void aRecordOfSeveralSetsNamesEachWithItsWindowAndKeepsTheEventsOtherFields() {
        AdEvent e = new AdEvent("e2", EventType.CLICK, TS, "c1", "ch1", 20, "r1", "events", 1, 8, TS + 1)
                .withAttributes(null, null, "{\"slot_id\":\"top\",\"n\":1.50}");
        BackfillRecord r = new BackfillRecord(
                e,
                List.of(
                        new BackfillRecord.SetWindow("default", TS - 1_000, TS + 59_000),
                        new BackfillRecord.SetWindow("campaign_slot", TS - 1_000, TS + 299_000)),
                TS + 3_600_000,
                "events",
                1,
                8);

        BackfillRecord back = BackfillRecord.fromJson(r.toJson());

        assertThat(back.sets()).isEqualTo(r.sets());
        assertThat(back.setNames()).containsExactly("default", "campaign_slot");
        assertThat(back.windowStart()).isEqualTo(TS - 1_000);
        assertThat(back.event().attributesJson).isEqualTo("{\"slot_id\":\"top\",\"n\":1.50}");
    }

    @Test
    void aRecordOfAReleaseBeforeMetricSetsIsTheDefaultSets() {
        String old = "{\"event\":{\"event_id\":\"e1\",\"event_type\":\"click\",\"event_ts\":" + TS
                + ",\"campaign_id\":\"c1\",\"channel_id\":\"ch1\",\"cost_micros\":20},\"window_start\":"
                + (TS - 1_000) + ",\"window_end\":" + (TS + 59_000)
                + ",\"watermark\":1,\"topic\":\"events\",\"partition\":1,\"offset\":7}";

        assertThat(BackfillRecord.fromJson(old).sets())
                .containsExactly(new BackfillRecord.SetWindow("default", TS - 1_000, TS + 59_000));
    }

    @Test
    void setsThatAreNotMetricSetNamesAreRefused() {
        String bad = GOOD.replace("\"set\":\"default\"", "\"set\":\"Not A Set\"");
        assertThatThrownBy(() -> BackfillRecord.fromJson(bad))
                .hasMessage("not a backfill record: set must be a metric set's name, got \"Not A Set\"");
    }

    @Test
    void whatTheStreamWroteReadsBack() {
        BackfillRecord b = BackfillRecord.fromJson(GOOD);
        assertThat(b.event().eventId).isEqualTo("e1");
        assertThat(b.event().eventTs).isEqualTo(TS);
        assertThat(b.event().costMicros).isEqualTo(20);
        assertThat(b.event().requestId).isEqualTo("r1");
        assertThat(b.event().topic).isEqualTo("events");
        assertThat(b.event().offset).isEqualTo(7);
        assertThat(b.windowStart()).isEqualTo(TS - 1_000);
        assertThat(b.watermark()).isEqualTo(TS + 3_600_000);
        assertThat(BackfillRecord.fromJson(b.toJson())).isEqualTo(b);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                // what GOOD holds | what replaces it | what the message names
                "\"event_ts\":1795860001000 | \"event_ts\":9223372036854775807 | event_ts",
                "\"event_ts\":1795860001000 | \"event_ts\":\"1795860001000\" | event_ts",
                "\"event_ts\":1795860001000 | \"event_ts\":1.795860001E12 | event_ts",
                "\"event_id\":\"e1\" | \"event_id\":\"e\\u0000\" | event_id",
                "\"event_id\":\"e1\" | \"event_id\":\"\\ud800\" | event_id",
                "\"campaign_id\":\"c1\" | \"campaign_id\":7 | campaign_id",
                "\"cost_micros\":20 | \"cost_micros\":-20 | cost_micros",
                "\"event_type\":\"click\" | \"event_type\":\"view\" | event_type",
                "\"partition\":1 | \"partition\":-1 | partition",
                "\"partition\":1 | \"partition\":\"1\" | partition",
                "\"offset\":7 | \"offset\":18446744073709551616 | offset",
                "\"topic\":\"events\" | \"topic\":\"ev\\u0000ents\" | topic",
                "\"watermark\":1795863601000 | \"watermark\":\"soon\" | watermark",
            })
    void aRecordBreakingARuleIsRefusedNamingTheField(String from, String to, String field) {
        assertThat(GOOD).contains(from);
        String hostile = GOOD.replace(from, to);

        assertThatThrownBy(() -> BackfillRecord.fromJson(hostile))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("not a backfill record: ")
                .hasMessageContaining(field);
    }

    @Test
    void aKeyGivenTwiceOrAnythingAfterTheObjectIsRefused() {
        String[] hostile = {
            GOOD.replace("\"topic\":\"events\"", "\"topic\":\"events\",\"topic\":\"other\""),
            GOOD.replace("\"event_id\":\"e1\"", "\"event_id\":\"e1\",\"event_id\":\"e2\""),
            GOOD + " {}",
            GOOD + "x",
        };
        assertThat(hostile[0]).isNotEqualTo(GOOD);
        assertThat(hostile[1]).isNotEqualTo(GOOD);
        assertThatThrownBy(() -> BackfillRecord.fromJson(hostile[0])).hasMessageContaining("Duplicate field 'topic'");
        assertThatThrownBy(() -> BackfillRecord.fromJson(hostile[1]))
                .hasMessageContaining("Duplicate field 'event_id'");
        assertThatThrownBy(() -> BackfillRecord.fromJson(hostile[2]))
                .hasMessageStartingWith("not a backfill record: ")
                .hasMessageContaining("Trailing token");
        assertThatThrownBy(() -> BackfillRecord.fromJson(hostile[3])).hasMessageStartingWith("not a backfill record: ");
    }

    /** A reason is logged and kept per skipped record: a megabyte in a field must not make it a megabyte long. */
    @Test
    void theReasonIsOneShortLineWhateverTheRecordHolds() {
        String huge = "x".repeat(900_000);
        String[] hostile = {
            GOOD.replace("\"watermark\":1795863601000", "\"watermark\":\"" + huge + "\""),
            GOOD.replace("\"topic\":\"events\"", "\"topic\":\"" + huge + "\""),
            GOOD.replace("\"offset\":7}", "\"offset\":7,\"pad\":\"" + huge + "\"}") + "\n2026-12-04 ERROR forged",
            GOOD.replace("\"topic\":\"events\"", "\"topic\":\"ev\\nents\""),
        };
        for (String json : hostile) {
            assertThat(json).isNotEqualTo(GOOD);
            assertThatThrownBy(() -> BackfillRecord.fromJson(json)).satisfies(e -> {
                assertThat(e.getMessage()).startsWith("not a backfill record: ");
                assertThat(e.getMessage().length()).isLessThanOrEqualTo(BackfillRecord.MAX_REASON);
                assertThat(e.getMessage()).doesNotContain("\n", "\r");
            });
        }
    }

    @Test
    void notAnObjectIsRefused() {
        for (String json : new String[] {"", "null", "[]", "5", "{\"event\": 1}"}) {
            assertThatThrownBy(() -> BackfillRecord.fromJson(json))
                    .as(json)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("not a backfill record: ");
        }
    }
}
