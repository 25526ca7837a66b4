package dev.recount.stream.lake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.Migrations;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.stream.Fixtures;
import dev.recount.stream.testutils.LakeFiles;
import dev.recount.stream.testutils.StreamTestStack;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whatever the validator accepts, both sinks store exactly: ids made from hostile, fuzzed input (controls, lone
 * surrogates, astral characters, '?', U+FFFD, U+FEFF, U+FFFF, combining marks) go through core's validator; the
 * accepted events are written to PostgreSQL (a stream_window_metrics row per campaign and channel) and to a lake
 * Parquet file, and every id read back is the same Java string. A lone surrogate would come back as '?' from both
 * (see {@link #withoutTheIdRuleTheSinksWouldCorruptOrRefuseIds}), so this fails if the validator lets one through.
 */
class AcceptedEventsRoundTripITCase {
    private static final long SEED = 0x1d5_2026_1129L;
    private static final Instant W0 = Instant.parse("2026-11-29T10:00:00Z");
    private static final long RECORD_TS = W0.plusSeconds(61).toEpochMilli();
    private static final String[] PIECES = {
        "a",
        "Z",
        "7",
        "-",
        "_",
        ".",
        "?",
        " ",
        "\"",
        "\\",
        "/",
        "\u00e9",
        "\u4e2d",
        "\u20ac",
        "\uFFFD",
        "\uFEFF",
        "\uFFFF",
        "\u0301",
        "\u200D",
        "\u05D0",
        "\u00A0",
        "\uD83D\uDE80",
        "\uDBFF\uDFFF",
        "\uD800\uDC00",
        "\u0000",
        "\u0001",
        "\u001F",
        "\n",
        "\u007F",
        "\u0085",
        "\u009F",
        "\uD800",
        "\uDBFF",
        "\uDC00",
        "\uDFFF"
    };

    private final StreamTestStack stack = new StreamTestStack();
    private final EventValidator validator = new EventValidator(ValidationSettings.defaults());

    @Test
    void idsOfAcceptedEventsComeBackIdenticalFromPostgresAndParquet(@TempDir Path dir) throws Exception {
        List<AdEvent> accepted = new ArrayList<>();
        Map<InvalidReason, Integer> rejected = new HashMap<>();
        for (byte[] record : fuzzedRecords(new SplittableRandom(SEED), 3_000)) {
            ValidationResult r = validator.validate(record, RECORD_TS, "ad-events", 0, accepted.size());
            if (r.isValid()) accepted.add(r.event());
            else rejected.merge(r.reason(), 1, Integer::sum);
        }
        // Two channels that differ only in a lone surrogate against '?': the sinks would store both as "ch-a?".
        accepted.addAll(acceptedOf(
                pairRecord("pair-1", "ch-a\\ud800"),
                pairRecord("pair-2", "ch-a\\ud800"),
                pairRecord("pair-3", "ch-a?"),
                pairRecord("pair-4", "ch-a?"),
                pairRecord("pair-5", "ch-a?")));

        assertThat(rejected.getOrDefault(InvalidReason.SCHEMA, 0))
                .as("fuzzed ids the id rule refused")
                .isGreaterThan(300);
        assertThat(accepted).hasSizeGreaterThan(1_000);
        assertThat(accepted).anyMatch(e -> e.campaignId.codePoints().anyMatch(Character::isSupplementaryCodePoint));
        assertThat(accepted).anyMatch(e -> e.channelId.contains("?") || e.campaignId.contains("?"));
        assertThat(accepted).anyMatch(e -> e.requestId != null && e.requestId.contains("\uFFFD"));

        Map<WindowKey, MeasureValues> expected = windows(accepted);
        assertThat(postgresRoundTrip(expected)).containsExactlyInAnyOrderEntriesOf(expected);
        assertSameIds(LakeFiles.writeAndRead(accepted, dir.resolve("part-0.parquet")), accepted);
        // The pair stayed apart: the lone surrogate was dead-lettered, '?' counts only its own three events.
        assertThat(expected.get(WindowKey.of(W0.toEpochMilli(), "cmp-pair", "ch-a?"))
                        .count(Fixtures.DEFAULT_SET.eventsIndex()))
                .isEqualTo(3);
        assertThat(expected.keySet()).noneMatch(k -> k.dimension(1).equals("ch-a\uD800"));
    }

    /**
     * Why the id rule exists, shown on the real sinks: PostgreSQL refuses a NUL in every commit, and the driver and
     * the Parquet writer both store a lone surrogate as '?', merging it with a real '?' id.
     */
    @Test
    void withoutTheIdRuleTheSinksWouldCorruptOrRefuseIds(@TempDir Path dir) throws Exception {
        WindowKey lone = WindowKey.of(W0.toEpochMilli(), "cmp", "ch-a\uD800");
        WindowRow loneRow =
                new WindowRow(lone, W0.plusSeconds(60).toEpochMilli(), Fixtures.defaultValues(1, 0, 0, 5, 1));
        WindowRow nulRow = new WindowRow(
                WindowKey.of(W0.toEpochMilli(), "cmp\u0000x", "ch"),
                W0.plusSeconds(60).toEpochMilli(),
                Fixtures.defaultValues(1, 0, 0, 5, 1));
        StreamWindowMetricsTable table = Fixtures.defaultTable();
        String schema = freshSchema();

        try (Connection c = connection(schema)) {
            table.upsert(c, List.of(new StreamWindowMetricsTable.Row(loneRow, 1)));
            assertThat(table.readRange(c, W0.toEpochMilli(), W0.plusSeconds(60).toEpochMilli()))
                    .extracting(r -> r.window().key().dimension(1))
                    .containsExactly("ch-a?");
            assertThatThrownBy(() -> table.upsert(c, List.of(new StreamWindowMetricsTable.Row(nulRow, 1))))
                    .isInstanceOf(SQLException.class);
        }
        AdEvent e = new AdEvent(
                "e\uDC00",
                dev.recount.core.event.EventType.CLICK,
                W0.toEpochMilli(),
                "cmp",
                "ch",
                1,
                "ad-events",
                0,
                0,
                RECORD_TS);
        assertThat(LakeFiles.writeAndRead(List.of(e), dir.resolve("part-0.parquet"))
                        .get(0)
                        .get("event_id")
                        .toString())
                .isEqualTo("e?");
    }

    // --- the fuzzed input --------------------------------------------------------------------------------------------

    /**
     * Events over a small pool of campaign and channel ids (so rows aggregate several events), each id drawn from
     * {@link #PIECES}: some obey the id rule, some hold a control character or half a surrogate pair. Non-ASCII
     * characters are sent raw or as JSON escapes at random; lone surrogates can only be escapes in valid UTF-8.
     */
    private static List<byte[]> fuzzedRecords(SplittableRandom r, int count) {
        String[] campaigns = new String[30];
        String[] channels = new String[12];
        for (int i = 0; i < campaigns.length; i++) campaigns[i] = "cmp-" + fuzzedId(r, 4);
        for (int i = 0; i < channels.length; i++) channels[i] = "ch-" + fuzzedId(r, 3);
        List<byte[]> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Map<String, String> ids = new LinkedHashMap<>();
            ids.put("event_id", "ev-" + i + "-" + fuzzedId(r, 3));
            ids.put("campaign_id", campaigns[r.nextInt(campaigns.length)]);
            ids.put("channel_id", channels[r.nextInt(channels.length)]);
            if (r.nextBoolean()) ids.put("request_id", "imp-" + fuzzedId(r, 3));
            records.add(record(
                    ids,
                    pick(r, new String[] {"impression", "click", "conversion"}),
                    W0.toEpochMilli() + r.nextInt(60_000),
                    r.nextLong(0, 5_000_000),
                    r));
        }
        return records;
    }

    private static String fuzzedId(SplittableRandom r, int pieces) {
        StringBuilder b = new StringBuilder();
        for (int i = r.nextInt(1, pieces + 1); i > 0; i--) {
            // Mostly well-formed pieces, so that most records are accepted and the sinks see plenty of them.
            b.append(r.nextInt(4) == 0 ? pick(r, PIECES) : pick(r, java.util.Arrays.copyOf(PIECES, 24)));
        }
        return b.toString();
    }

    private static byte[] pairRecord(String eventId, String channelJson) {
        String json =
                "{\"event_id\":\"" + eventId + "\",\"event_type\":\"impression\",\"event_ts\":" + W0.toEpochMilli()
                        + ",\"campaign_id\":\"cmp-pair\",\"channel_id\":\"" + channelJson + "\",\"cost_micros\":10}";
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private List<AdEvent> acceptedOf(byte[]... records) {
        List<AdEvent> out = new ArrayList<>();
        for (byte[] record : records) {
            ValidationResult r = validator.validate(record, RECORD_TS, "ad-events", 1, 0);
            if (r.isValid()) out.add(r.event());
            else assertThat(r.detail()).contains("unpaired surrogate U+D800");
        }
        return out;
    }

    /** The event as JSON: ids spelled raw (UTF-8) or as escapes, chosen per character. */
    private static byte[] record(Map<String, String> ids, String type, long eventTs, long cost, SplittableRandom r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(("{\"event_type\":\"" + type + "\",\"event_ts\":" + eventTs + ",\"cost_micros\":" + cost)
                .getBytes(StandardCharsets.UTF_8));
        ids.forEach((field, id) -> {
            out.writeBytes((",\"" + field + "\":\"").getBytes(StandardCharsets.UTF_8));
            for (int i = 0; i < id.length(); i++) {
                char c = id.charAt(i);
                boolean pair = Character.isHighSurrogate(c)
                        && i + 1 < id.length()
                        && Character.isLowSurrogate(id.charAt(i + 1));
                if (c == '"' || c == '\\') {
                    out.write('\\');
                    out.write(c);
                } else if (c >= 0x20 && c < 0x7F) {
                    out.write(c);
                } else if (pair && r.nextBoolean()) {
                    out.writeBytes(id.substring(i, i + 2).getBytes(StandardCharsets.UTF_8));
                    i++;
                } else if (c < 0x20 || Character.isSurrogate(c) || r.nextBoolean()) {
                    out.writeBytes(String.format("\\u%04x", (int) c).getBytes(StandardCharsets.US_ASCII));
                } else {
                    out.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8)); // DEL, C1 and the rest raw
                }
            }
            out.write('"');
        });
        out.write('}');
        return out.toByteArray();
    }

    private static <T> T pick(SplittableRandom r, T[] options) {
        return options[r.nextInt(options.length)];
    }

    // --- the sinks -----------------------------------------------------------------------------------------------

    /** Every event in W0 (the fuzzed events all lie there), by core's definition of the default set. */
    private static Map<WindowKey, MeasureValues> windows(List<AdEvent> events) {
        return Fixtures.valuesPerWindow(Fixtures.DEFAULT_SET, events);
    }

    private Map<WindowKey, MeasureValues> postgresRoundTrip(Map<WindowKey, MeasureValues> windows) throws SQLException {
        List<StreamWindowMetricsTable.Row> rows = new ArrayList<>();
        windows.forEach((k, m) ->
                rows.add(new StreamWindowMetricsTable.Row(new WindowRow(k, k.windowStartMillis() + 60_000, m), 1)));
        StreamWindowMetricsTable table = Fixtures.defaultTable();
        try (Connection c = connection(freshSchema())) {
            table.upsert(c, rows);
            Map<WindowKey, MeasureValues> back = new HashMap<>();
            for (StreamWindowMetricsTable.Row row :
                    table.readRange(c, W0.toEpochMilli(), W0.plusSeconds(60).toEpochMilli())) {
                assertThat(back.put(row.window().key(), row.window().values()))
                        .as("duplicate key %s", row.window().key())
                        .isNull();
            }
            return back;
        }
    }

    private static void assertSameIds(List<GenericRecord> back, List<AdEvent> written) {
        assertThat(back).hasSameSizeAs(written);
        for (int i = 0; i < written.size(); i++) {
            AdEvent e = written.get(i);
            GenericRecord r = back.get(i);
            assertThat(r.get("event_id").toString()).isEqualTo(e.eventId);
            assertThat(r.get("campaign_id").toString()).isEqualTo(e.campaignId);
            assertThat(r.get("channel_id").toString()).isEqualTo(e.channelId);
            assertThat(r.get("request_id") == null ? null : r.get("request_id").toString())
                    .isEqualTo(e.requestId);
        }
    }

    private String freshSchema() {
        String schema = stack.stack().createSchema("roundtrip");
        Migrations.apply(
                stack.stack().jdbcUrl(),
                stack.stack().adminUser(),
                stack.stack().adminPassword(),
                schema);
        return schema;
    }

    private Connection connection(String schema) throws SQLException {
        Connection c = stack.stack().adminConnection();
        c.setSchema(schema);
        return c;
    }
}
