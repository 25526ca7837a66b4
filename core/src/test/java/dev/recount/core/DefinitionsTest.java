package dev.recount.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.Durations;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.DeadLetterRecord;
import dev.recount.core.event.EventType;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MeasureSums;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.EventTime;
import dev.recount.core.window.WindowAlignment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class DefinitionsTest {
    static final long T0 = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    static final WindowAlignment MINUTE = new WindowAlignment(60_000);

    static AdEvent event(EventType type, long cost) {
        return new AdEvent("e", type, T0, "c", "ch", cost, "t", 0, 0, T0);
    }

    @Test
    void windowsAreAlignedToTheEpochIncludingTheirFirstAndLastMillisecond() {
        assertThat(MINUTE.windowStart(T0)).isEqualTo(T0);
        assertThat(MINUTE.windowStart(T0 + 59_999)).isEqualTo(T0);
        assertThat(MINUTE.windowStart(T0 + 60_000)).isEqualTo(T0 + 60_000);
        assertThat(MINUTE.windowEnd(T0 + 1)).isEqualTo(T0 + 60_000);
        assertThat(MINUTE.windowStart(-1)).isEqualTo(-60_000);
        assertThat(MINUTE.isAligned(T0)).isTrue();
        assertThat(MINUTE.isAligned(T0 + 1)).isFalse();
    }

    /**
     * The SQL text of the window start. Spark evaluates it against {@link WindowAlignment#windowStart} in
     * batch-backfill's WindowColumnTest (core has no SQL engine); here only its shape and argument checks.
     */
    @Test
    void sqlWindowStartIsAFloorModuloOverTheNamedColumn() {
        assertThat(MINUTE.sqlWindowStart("event_ts")).isEqualTo("(event_ts - (((event_ts % 60000) + 60000) % 60000))");
        assertThatThrownBy(() -> MINUTE.sqlWindowStart(" ")).hasMessageContaining("eventTsColumn");
    }

    @Test
    void tooLateFollowsFlinksRuleOnTheWindowsLastMillisecond() {
        long lateness = Duration.ofMinutes(2).toMillis();
        long lastMs = T0 + 59_999;
        EventTime rules = new EventTime(MINUTE, lateness);
        assertThat(rules.isTooLate(T0, lastMs + lateness - 1)).isFalse();
        assertThat(rules.isTooLate(T0, lastMs + lateness)).isTrue();
        assertThat(rules.hasFired(T0, lastMs - 1)).isFalse();
        assertThat(rules.hasFired(T0, lastMs)).isTrue();
        assertThat(rules.lastFiredStart(lastMs)).isEqualTo(T0);
        assertThat(rules.watermarkClosing(T0 + 60_000)).isEqualTo(lastMs + lateness);
    }

    @Test
    void theDefaultSetCountsByTypeAndSumsSpendOverAllTypes() {
        MetricSet set = MetricSets.defaults().defaultSet().orElseThrow();
        MeasureSums acc = set.newSums();
        set.add(acc, event(EventType.IMPRESSION, 10));
        set.add(acc, event(EventType.IMPRESSION, 20));
        set.add(acc, event(EventType.CLICK, 300));
        set.add(acc, event(EventType.CONVERSION, 4000));

        assertThat(set.values(acc)).isEqualTo(MeasureValues.of(2, 1, 1, 4330, 4));
        assertThat(set.values(set.merge(set.merge(set.newSums(), acc), acc)))
                .isEqualTo(MeasureValues.of(4, 2, 2, 8660, 8));
    }

    @Test
    void sqlContributionStatesTheSameRuleAsJava() {
        // Evaluate each SQL expression for one event by hand-substitution: the default set's shapes are fixed.
        MetricSet set = MetricSets.defaults().defaultSet().orElseThrow();
        for (EventType type : EventType.values()) {
            for (Measure m : set.measures()) {
                String sql = m.sqlContribution(c -> c.equals("event_type") ? "t" : "c", v -> "'" + v + "'", "BIGINT");
                long expected = m.contribution(event(type, 77));
                assertThat(evaluate(sql, "BIGINT", type.wireName(), 77))
                        .as(m + " for " + type + ": " + sql)
                        .isEqualTo(expected);
            }
        }
        assertThat(set.measures().stream().map(Measure::sqlType))
                .containsExactly("BIGINT", "BIGINT", "BIGINT", "DECIMAL(38,0)", "BIGINT");
    }

    /** A tiny evaluator for exactly the shapes the default set's measures emit, with {@code type} their cast target. */
    static long evaluate(String sql, String type, String typeValue, long cost) {
        String s = sql.replace("CAST(c AS " + type + ")", Long.toString(cost))
                .replace("CAST(1 AS " + type + ")", "1")
                .replace("CAST(0 AS " + type + ")", "0");
        if (s.startsWith("CASE WHEN t IN ('")) {
            String wanted = s.substring("CASE WHEN t IN ('".length(), s.indexOf("') THEN "));
            String then = s.substring(s.indexOf(" THEN ") + 6, s.indexOf(" ELSE "));
            return wanted.equals(typeValue) ? Long.parseLong(then) : 0;
        }
        return Long.parseLong(s);
    }

    @Test
    void lakePartitionsAreUtcDateAndHour() {
        assertThat(LakeLayout.partitionPath(
                        Instant.parse("2026-11-29T07:59:59.999Z").toEpochMilli()))
                .isEqualTo("event_date=2026-11-29/event_hour=07");
        assertThat(LakeLayout.datesCovering(T0, T0 + Duration.ofDays(1).toMillis()))
                .hasSize(2);
    }

    @Test
    void durationsAcceptIsoAndShorthand() {
        assertThat(Durations.parse("PT30S")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("7d")).isEqualTo(Duration.ofDays(7));
        assertThat(Durations.parse("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(Durations.format(Duration.ofMinutes(2))).isEqualTo("2m");
        assertThatThrownBy(() -> Durations.parse("5 minutes")).hasMessageContaining("5 minutes");
        assertThatThrownBy(() -> Durations.parse("-PT5S")).hasMessageContaining("negative");
    }

    @Test
    void backfillRecordsRoundTrip() {
        AdEvent e = new AdEvent("e-9", EventType.CONVERSION, T0 + 5, "c<1>", "app", 12, "in", 1, 99, T0 + 600_000);
        BackfillRecord r = new BackfillRecord(
                e, List.of(new BackfillRecord.SetWindow("default", T0, T0 + 60_000)), T0 + 500_000, "in", 1, 99);

        BackfillRecord back = BackfillRecord.fromJson(r.toJson());

        assertThat(back.windowStart()).isEqualTo(T0);
        assertThat(back.watermark()).isEqualTo(T0 + 500_000);
        assertThat(back.event().eventId).isEqualTo("e-9");
        assertThat(back.event().campaignId).isEqualTo("c<1>");
        assertThat(back.offset()).isEqualTo(99);
        assertThat(back.event().requestId).isNull();
        assertThat(r.toJson()).doesNotContain("request_id");
    }

    @Test
    void backfillRecordsCarryTheRequestId() {
        AdEvent e = new AdEvent(
                "e-9", EventType.CLICK, T0 + 5, "c", "app", 12, "imp-\uD83D\uDE80-1", "in", 1, 99, T0 + 600_000);

        BackfillRecord back = BackfillRecord.fromJson(new BackfillRecord(
                        e, List.of(new BackfillRecord.SetWindow("default", T0, T0 + 60_000)), T0 + 500_000, "in", 1, 99)
                .toJson());

        assertThat(back.event().requestId).isEqualTo("imp-\uD83D\uDE80-1");
    }

    @Test
    void deadLetterKeepsTheRawValueButCapsItsSize() {
        String small = DeadLetterRecord.toJson(
                InvalidReason.SCHEMA, "bad", "in", 0, 5, T0, null, "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
        assertThat(small)
                .contains("\"reason\":\"schema\"")
                .contains("\"raw\":\"{\\\"a\\\":1}\"")
                .doesNotContain("raw_truncated");

        String big = DeadLetterRecord.toJson(InvalidReason.MALFORMED, "bad", "in", 0, 5, T0, null, new byte[2_000_000]);
        assertThat(big.length()).isLessThan(1_000_000);
        assertThat(big).contains("\"raw_truncated\":true").contains("\"raw_bytes\":2000000");
    }

    @Test
    void aCappedRawValueEndsOnAWholeCharacter() throws Exception {
        // One ASCII byte, then rockets (two chars each): the cap falls between the halves of one.
        byte[] value = ("x" + "\uD83D\uDE80".repeat(DeadLetterRecord.MAX_RAW_CHARS)).getBytes(StandardCharsets.UTF_8);
        String json = DeadLetterRecord.toJson(InvalidReason.MALFORMED, "bad", "in", 0, 5, T0, null, value);
        String raw = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(json)
                .get("raw")
                .asText();
        assertThat(raw).hasSize(DeadLetterRecord.MAX_RAW_CHARS - 1).endsWith("\uD83D\uDE80");
        assertThat(new String(json.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8))
                .doesNotContain("?");
    }

    @Test
    void aDeadLetterKeepsAKeyUpToItsCapAndCutsALongerOne() throws Exception {
        assertThat(DeadLetterRecord.key(null)).isNull();
        byte[] atCap = new byte[DeadLetterRecord.MAX_KEY_BYTES];
        assertThat(DeadLetterRecord.key(atCap)).isSameAs(atCap);
        assertThat(DeadLetterRecord.toJson(InvalidReason.SCHEMA, "bad", "in", 0, 5, T0, atCap, new byte[] {'x'}))
                .doesNotContain("key_truncated")
                .doesNotContain("key_bytes");

        byte[] longer = new byte[DeadLetterRecord.MAX_KEY_BYTES + 1];
        longer[0] = 7;
        assertThat(DeadLetterRecord.key(longer))
                .hasSize(DeadLetterRecord.MAX_KEY_BYTES)
                .startsWith((byte) 7);
        var json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(DeadLetterRecord.toJson(InvalidReason.SCHEMA, "bad", "in", 0, 5, T0, longer, null));
        assertThat(json.get("key_truncated").asBoolean()).isTrue();
        assertThat(json.get("key_bytes").asInt()).isEqualTo(DeadLetterRecord.MAX_KEY_BYTES + 1);
        assertThat(json.get("raw").isNull()).isTrue();
    }

    /**
     * The raw value is decoded from its first bytes only (a value of hundreds of MB is not decoded whole to be cut);
     * what it shows must be what decoding the whole value and cutting it shows, for any bytes around the cut:
     * ASCII, two-, three- and four-byte characters, and bytes that are not UTF-8.
     */
    @Test
    void theRawValueIsTheCutOfTheWholeValueDecoded() {
        java.util.Random random = new java.util.Random(20261203L);
        byte[][] pieces = {
            {'a'},
            {(byte) 0xc3, (byte) 0xa9},
            {(byte) 0xe2, (byte) 0x82, (byte) 0xac},
            {(byte) 0xf0, (byte) 0x9f, (byte) 0x9a, (byte) 0x80},
            {(byte) 0xff},
            {(byte) 0xe2, (byte) 0x82},
            {1}
        };
        for (int round = 0; round < 60; round++) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            // Long enough to be cut, short or long against the bytes decoded: 64 Ki to 4 × 64 Ki characters' worth.
            int target = DeadLetterRecord.MAX_RAW_CHARS + random.nextInt(3 * DeadLetterRecord.MAX_RAW_CHARS + 64);
            int piece = random.nextInt(pieces.length);
            while (out.size() < target) {
                if (random.nextInt(8) == 0) piece = random.nextInt(pieces.length);
                out.writeBytes(pieces[piece]);
            }
            byte[] value = out.toByteArray();
            String json = DeadLetterRecord.toJson(InvalidReason.MALFORMED, "bad", "in", 0, 5, T0, null, value);
            assertThat(json).as("round %d, %d bytes", round, value.length).isEqualTo(wholeDecodedThenCut(value));
        }
    }

    /** The dead letter as it was made before only the first bytes were decoded. */
    private static String wholeDecodedThenCut(byte[] value) {
        var n = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        n.put("reason", "malformed");
        n.put("detail", "bad");
        n.put("topic", "in");
        n.put("partition", 0);
        n.put("offset", 5);
        n.put("record_ts", T0);
        String raw = new String(value, StandardCharsets.UTF_8);
        int max = DeadLetterRecord.MAX_RAW_CHARS;
        if (raw.length() > max) {
            n.put("raw", raw.substring(0, Character.isHighSurrogate(raw.charAt(max - 1)) ? max - 1 : max));
            n.put("raw_truncated", true);
            n.put("raw_bytes", value.length);
        } else {
            n.put("raw", raw);
        }
        return n.toString();
    }
}
