package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.TestSets;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.BackfillRecord.SetWindow;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.WindowRow;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backfills of several metric sets ({@link TestSets#THREE_SETS}: the default set; campaign x slot_id in 5-minute
 * windows; channel x country with a sum of the integer attribute quantity) from one lake, with expectations computed
 * by hand from the fixtures below.
 */
class MultiSetBackfillITCase {
    private static final long SECOND = 1_000;
    private static final long MINUTE = 60_000;
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final String FROM = "2026-11-28T10:00:00Z";
    private static final String TO = "2026-11-28T10:05:00Z";

    static LakeEvent event(String id, String type, long ts, String campaign, String channel, long cost, long offset) {
        return LakeEvent.of(id, type, ts, campaign, channel, cost, offset);
    }

    // The range's events, each with the fields beyond the contract it arrived with.
    static final LakeEvent E1 =
            event("e1", "impression", W + SECOND, "c1", "ch1", 100, 1).withAttributes(json("s1", "DE", 2));
    static final LakeEvent E2 =
            event("e2", "click", W + 2 * SECOND, "c1", "ch1", 50, 2).withAttributes(json("s1", "DE", 3));
    static final LakeEvent E3 = event("e3", "click", W + MINUTE + SECOND, "c1", "ch2", 70, 3)
            .withAttributes("{\"slot_id\":\"s2\",\"country\":\"FR\"}");
    /** No fields beyond the contract: every attribute at its default (slot_id none, country other, quantity 0). */
    static final LakeEvent E4 = event("e4", "impression", W + MINUTE + 2 * SECOND, "c2", "ch1", 10, 4);
    /** Two copies whose attributes differ: the lower offset (slot s1, US, quantity 4, cost 111) is the one counted. */
    static final LakeEvent E5_HIGH = event("e5", "conversion", W + 3 * MINUTE + SECOND, "c1", "ch1", 999, 110)
            .withAttributes(json("s9", "GB", 9));

    static final LakeEvent E5_LOW = event("e5", "conversion", W + 3 * MINUTE + SECOND, "c1", "ch1", 111, 107)
            .withAttributes(json("s1", "US", 4));
    /** One Kafka record stored twice (identical copies). */
    static final LakeEvent E6 = event("e6", "click", W + 4 * MINUTE, "c2", "ch2", 5, 5)
            .withAttributes("{\"country\":\"DE\",\"quantity\":1}");
    /** Only a field nobody declared, and quantity. */
    static final LakeEvent E7 = event("e7", "impression", W + 4 * MINUTE + 30 * SECOND, "c1", "ch1", 20, 6)
            .withAttributes("{\"campaign_note\":\"x\",\"quantity\":6}");

    static final LakeEvent BEFORE = event("before", "impression", W - 1, "c1", "ch1", 7, 8);
    static final LakeEvent AFTER = event("after", "click", W + 5 * MINUTE, "c1", "ch1", 1, 9);

    @TempDir
    Path dir;

    BatchStack t;
    MetricSets sets;
    MetricSet defaultSet;
    MetricSet slot;
    MetricSet country;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        sets = t.metricSets(TestSets.THREE_SETS);
        defaultSet = sets.set("default").orElseThrow();
        slot = sets.set("campaign_slot").orElseThrow();
        country = sets.set("channel_country").orElseThrow();
        t.lakeCompleteUntil(Instant.parse("2026-11-28T11:00:00Z"));
    }

    private void writeRange() {
        t.lake.write(List.of(E1, E2, E3, E4, E5_HIGH, E6, E7, BEFORE, AFTER));
        // The other copies arrive in later files, as replays do.
        t.lake.write(List.of(E5_LOW, E6));
    }

    static final List<WindowRow> DEFAULT_ROWS = List.of(
            row(W, MINUTE, MeasureValues.of(1, 1, 0, 150, 2), "c1", "ch1"),
            row(W + MINUTE, MINUTE, MeasureValues.of(0, 1, 0, 70, 1), "c1", "ch2"),
            row(W + MINUTE, MINUTE, MeasureValues.of(1, 0, 0, 10, 1), "c2", "ch1"),
            row(W + 3 * MINUTE, MINUTE, MeasureValues.of(0, 0, 1, 111, 1), "c1", "ch1"),
            row(W + 4 * MINUTE, MINUTE, MeasureValues.of(1, 0, 0, 20, 1), "c1", "ch1"),
            row(W + 4 * MINUTE, MINUTE, MeasureValues.of(0, 1, 0, 5, 1), "c2", "ch2"));

    /** campaign_slot: impressions, spend_micros, events per 5 minutes. */
    static final List<WindowRow> SLOT_ROWS = List.of(
            row(W, 5 * MINUTE, MeasureValues.of(1, 20, 1), "c1", "none"),
            row(W, 5 * MINUTE, MeasureValues.of(1, 100 + 50 + 111, 3), "c1", "s1"),
            row(W, 5 * MINUTE, MeasureValues.of(0, 70, 1), "c1", "s2"),
            row(W, 5 * MINUTE, MeasureValues.of(1, 10 + 5, 2), "c2", "none"));

    /** channel_country: clicks, quantity, events per minute. */
    static final List<WindowRow> COUNTRY_ROWS = List.of(
            row(W, MINUTE, MeasureValues.of(1, 2 + 3, 2), "ch1", "DE"),
            row(W + MINUTE, MINUTE, MeasureValues.of(0, 0, 1), "ch1", "other"),
            row(W + MINUTE, MINUTE, MeasureValues.of(1, 0, 1), "ch2", "FR"),
            row(W + 3 * MINUTE, MINUTE, MeasureValues.of(0, 4, 1), "ch1", "US"),
            row(W + 4 * MINUTE, MINUTE, MeasureValues.of(0, 6, 1), "ch1", "other"),
            row(W + 4 * MINUTE, MINUTE, MeasureValues.of(1, 1, 1), "ch2", "DE"));

    @Test
    void aRangeComputesEverySetFromOneReadInOneRun() throws Exception {
        writeRange();

        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        assertThat(t.batchRows(defaultSet)).containsExactlyElementsOf(DEFAULT_ROWS);
        assertThat(t.batchRows(slot)).containsExactlyElementsOf(SLOT_ROWS);
        assertThat(t.batchRows(country)).containsExactlyElementsOf(COUNTRY_ROWS);
        BatchRunsTable.Run run = t.lastRun();
        assertThat(t.runs()).hasSize(1);
        assertThat(run.metricSets()).containsExactly("default", "campaign_slot", "channel_country");
        assertThat(run.status()).isEqualTo(BatchRunsTable.Status.SUCCEEDED);
        assertThat(run.eventsRead()).isEqualTo(7);
        assertThat(run.windowsWritten()).isEqualTo(6 + 4 + 6);
        assertThat(t.lastOut.strip())
                .matches(Pattern.quote("run " + run.runId() + " (range [" + FROM + ", " + TO + ")): 7 events (9 lake"
                                + " rows); default: 6 window rows written, 0 unchanged, 0 deleted; campaign_slot: 4"
                                + " window rows written, 0 unchanged, 0 deleted; channel_country: 6 window rows"
                                + " written, 0 unchanged, 0 deleted; ")
                        + "\\d+\\.\\d s");
        JsonNode details = new ObjectMapper().readTree(run.details());
        assertThat(details.get("lake_rows").asLong()).isEqualTo(9);
        assertThat(details.get("duplicates_dropped").asLong()).isEqualTo(2);
        assertThat(details.at("/sets/campaign_slot/events").asLong()).isEqualTo(7);
        assertThat(details.at("/sets/campaign_slot/window_rows_written").asLong())
                .isEqualTo(4);
        assertThat(details.at("/sets/channel_country/events_left_out_invalid_attributes")
                        .asLong())
                .isZero();

        // A rerun finds every row as it stands, in every set.
        assertThat(t.backfill("range", "--from", FROM, "--to", TO, "--json"))
                .as(t.lastErr)
                .isZero();
        JsonNode json = new ObjectMapper().readTree(t.lastOut);
        assertThat(json.get("metric_sets")).hasSize(3);
        assertThat(json.get("window_rows_written").asLong()).isZero();
        assertThat(json.get("window_rows_unchanged").asLong()).isEqualTo(16);
        assertThat(json.at("/sets/channel_country/window_rows_unchanged").asLong())
                .isEqualTo(6);
        assertThat(t.batchRows(slot)).containsExactlyElementsOf(SLOT_ROWS);
    }

    @Test
    void onlyTheSetNamedIsComputedAndTheRangeNeedsOnlyItsWindows() throws Exception {
        writeRange();
        // Not aligned to campaign_slot's 5 minutes: refused for all sets, naming the set ...
        assertThat(t.backfill("range", "--from", FROM, "--to", "2026-11-28T10:02:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertThat(t.lastErr.strip())
                .isEqualTo("recount backfill range: --to 2026-11-28T10:02:00Z is not aligned to the 5m window of"
                        + " metric set campaign_slot; use 2026-11-28T10:00:00Z or 2026-11-28T10:05:00Z");
        assertThat(t.runs()).isEmpty();
        // ... and an unknown set is a bad argument too.
        assertThat(t.backfill("range", "--set", "nope", "--from", FROM, "--to", TO))
                .isEqualTo(ExitCode.USAGE.code());
        assertThat(t.lastErr).contains("no metric set named 'nope'", "[default, campaign_slot, channel_country]");

        // ... but fine for channel_country alone, whose windows are minutes.
        assertThat(t.backfill("range", "--set", "channel_country", "--from", FROM, "--to", "2026-11-28T10:02:00Z"))
                .as(t.lastErr)
                .isZero();

        assertThat(t.batchRows(country)).containsExactlyElementsOf(COUNTRY_ROWS.subList(0, 3));
        assertThat(t.batchRows(defaultSet)).isEmpty();
        assertThat(t.batchRows(slot)).isEmpty();
        assertThat(t.lastRun().metricSets()).containsExactly("channel_country");
        assertThat(t.lastOut).contains("channel_country: 3 window rows written").doesNotContain("default");
        try (Connection c = t.admin()) {
            assertThat(BatchRunsTable.coveredRanges(c, W + 60 * MINUTE, "channel_country"))
                    .singleElement()
                    .satisfies(r -> assertThat(r).containsExactly(W, W + 2 * MINUTE));
            assertThat(BatchRunsTable.coveredRanges(c, W + 60 * MINUTE, "default"))
                    .isEmpty();
        }
    }

    /** A set declared but not migrated yet has no tables: every command that would compute it refuses at once. */
    @Test
    void aSetWithoutItsTablesIsRefusedBeforeAnythingIsRecorded() throws Exception {
        BatchStack fresh = new BatchStack(dir.resolve("fresh"));
        fresh.lakeCompleteUntil(Instant.parse("2026-11-28T11:00:00Z"));
        fresh.declare(TestSets.THREE_SETS);

        assertThat(fresh.backfill("range", "--from", FROM, "--to", TO)).isEqualTo(ExitCode.USAGE.code());
        assertThat(fresh.lastErr.strip().lines()).hasSize(1);
        assertThat(fresh.lastErr)
                .contains(
                        "metric set campaign_slot of ",
                        "has no tables in schema " + fresh.schema + " yet: run ./recount migrate",
                        "metric set channel_country");
        assertThat(fresh.backfill("affected", "--set", "campaign_slot")).isEqualTo(ExitCode.USAGE.code());
        assertThat(fresh.runs()).isEmpty();

        // The default set's tables are the migrations': it runs alone.
        fresh.lake.write(List.of(E1));
        assertThat(fresh.backfill("range", "--set", "default", "--from", FROM, "--to", TO))
                .as(fresh.lastErr)
                .isZero();
        assertThat(fresh.batchRows()).containsExactly(row(W, MINUTE, MeasureValues.of(1, 0, 0, 100, 1), "c1", "ch1"));
    }

    /**
     * The attributes were declared after the events were archived: some files predate the attributes column (every
     * attribute at its default), some events carried values that break the rules declared since. Each such event is
     * left out of the sets that read the attribute it breaks — and only of those — and every run says how many.
     */
    @Test
    void historyFromTheAttributesColumnLeavesOutInvalidValuesAndSaysHowMany() throws Exception {
        LakeEvent h1 = event("h1", "impression", W + SECOND, "c1", "ch1", 10, 1);
        LakeEvent h2 = event("h2", "click", W + 2 * SECOND, "c1", "ch1", 20, 2)
                .withAttributes("{\"slot_id\":\"s1\",\"country\":\"XX\"}"); // country not one of its values
        LakeEvent h3 = event("h3", "click", W + MINUTE, "c1", "ch2", 30, 3)
                .withAttributes("{\"country\":\"FR\",\"quantity\":\"lots\"}"); // quantity not an integer
        LakeEvent h4 = event("h4", "impression", W + 2 * MINUTE, "c2", "ch1", 40, 4)
                .withAttributes("{\"country\":\"GB\",\"quantity\":7,\"slot_id\":\"s2\"}");
        LakeEvent h5 = event("h5", "conversion", W + 3 * MINUTE, "c1", "ch1", 50, 5)
                .withAttributes("{\"slot_id\":\"\",\"country\":\"DE\"}"); // an empty slot_id
        t.lake.writeWithoutAttributes(List.of(h1));
        t.lake.writeLikeStream(List.of(h2, h3, h4, h5), LakeEvent::requestId);

        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        assertThat(t.batchRows(defaultSet))
                .containsExactly(
                        row(W, MINUTE, MeasureValues.of(1, 1, 0, 30, 2), "c1", "ch1"),
                        row(W + MINUTE, MINUTE, MeasureValues.of(0, 1, 0, 30, 1), "c1", "ch2"),
                        row(W + 2 * MINUTE, MINUTE, MeasureValues.of(1, 0, 0, 40, 1), "c2", "ch1"),
                        row(W + 3 * MINUTE, MINUTE, MeasureValues.of(0, 0, 1, 50, 1), "c1", "ch1"));
        assertThat(t.batchRows(slot))
                .containsExactly(
                        row(W, 5 * MINUTE, MeasureValues.of(1, 10 + 30, 2), "c1", "none"),
                        row(W, 5 * MINUTE, MeasureValues.of(0, 20, 1), "c1", "s1"),
                        row(W, 5 * MINUTE, MeasureValues.of(1, 40, 1), "c2", "s2"));
        assertThat(t.batchRows(country))
                .containsExactly(
                        row(W, MINUTE, MeasureValues.of(0, 0, 1), "ch1", "other"),
                        row(W + 2 * MINUTE, MINUTE, MeasureValues.of(0, 7, 1), "ch1", "GB"),
                        row(W + 3 * MINUTE, MINUTE, MeasureValues.of(0, 0, 1), "ch1", "DE"));
        assertThat(t.lastOut)
                .contains(
                        "5 events (5 lake rows)",
                        "campaign_slot: 3 window rows written, 0 unchanged, 0 deleted, 1 events left out (an attribute"
                                + " the set reads is invalid)",
                        "channel_country: 3 window rows written, 0 unchanged, 0 deleted, 2 events left out")
                .doesNotContain("default: 4 window rows written, 0 unchanged, 0 deleted, ");
        JsonNode details = new ObjectMapper().readTree(t.lastRun().details());
        assertThat(details.at("/sets/default/events_left_out_invalid_attributes")
                        .asLong())
                .isZero();
        assertThat(details.at("/sets/campaign_slot/events_left_out_invalid_attributes")
                        .asLong())
                .isEqualTo(1);
        assertThat(details.at("/sets/channel_country/events_left_out_invalid_attributes")
                        .asLong())
                .isEqualTo(2);

        assertThat(t.backfill("range", "--from", FROM, "--to", TO, "--json"))
                .as(t.lastErr)
                .isZero();
        JsonNode json = new ObjectMapper().readTree(t.lastOut);
        assertThat(json.at("/sets/campaign_slot/events_left_out_invalid_attributes")
                        .asLong())
                .isEqualTo(1);
        assertThat(json.at("/sets/channel_country/events_left_out_invalid_attributes")
                        .asLong())
                .isEqualTo(2);
        assertThat(json.at("/sets/channel_country/events").asLong()).isEqualTo(3);
    }

    /**
     * A too-late event whose record names two sets (its window had closed for them, not for the third): each set's own
     * window of it is recomputed, the third set's rows are left alone; with {@code --set}, only that set's, and the
     * record waits, naming only the other set, until a run computes that one.
     */
    @Test
    void affectedRecomputesEachSetsWindowOfARecordNamingTwoSets() throws Exception {
        BackfillTopic topic = new BackfillTopic(t, 1);
        writeRange();
        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();
        long rangeRun = t.lastRun().runId();
        LakeEvent late = event("late", "click", W + MINUTE + 30 * SECOND, "c1", "ch1", 1_000, 50)
                .withAttributes(json("s1", "DE", 5))
                .receivedAfter(3_600_000);
        t.lake.write(List.of(late));
        List<SetWindow> named = List.of(
                new SetWindow("default", W + MINUTE, W + 2 * MINUTE),
                new SetWindow("campaign_slot", W, W + 5 * MINUTE));

        // Only campaign_slot's window: the record then waits for default's, naming default alone.
        topic.send(0, late, named);
        assertThat(t.backfill("affected", "--set", "campaign_slot"))
                .as(t.lastErr)
                .isZero();
        long slotRun = t.lastRun().runId();
        assertThat(t.lastRun().metricSets()).containsExactly("campaign_slot");
        assertThat(t.lastOut)
                .contains("1 backfill records; campaign_slot: 1 windows recomputed (8 events, 1 window rows written,"
                        + " 3 unchanged, 0 deleted)")
                .contains("1 records pending");
        assertThat(t.batchRows(slot))
                .contains(row(W, 5 * MINUTE, MeasureValues.of(1, 100 + 50 + 111 + 1_000, 4), "c1", "s1"));
        assertThat(t.batchRows(defaultSet)).containsExactlyElementsOf(DEFAULT_ROWS);
        assertThat(AffectedBackfillITCase.waiting(t))
                .containsExactly("0@0 late: metric set default: waits for a run that computes metric set default"
                        + " (this run: campaign_slot)");
        assertThat(waitingSets()).containsExactly(List.of("default"));
        assertThat(topic.committed()).containsExactly(Map.entry(0, 1L));

        // A run of every set settles it: default's window alone, campaign_slot's is not redone.
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        long allRun = t.lastRun().runId();
        assertThat(t.lastOut)
                .contains("1 backfill records; default: 1 windows recomputed (3 events, 1 window rows written, 2"
                        + " unchanged, 0 deleted); campaign_slot: 0 windows recomputed (0 events, 0 window rows"
                        + " written, 0 unchanged, 0 deleted); channel_country: 0 windows recomputed")
                .doesNotContain("pending");
        assertThat(AffectedBackfillITCase.waiting(t)).isEmpty();
        assertThat(t.batchRows(defaultSet))
                .contains(row(W + MINUTE, MINUTE, MeasureValues.of(0, 1, 0, 1_000, 1), "c1", "ch1"));
        // channel_country was not named: its rows are the range run's, without the late click.
        assertThat(t.batchRows(country)).containsExactlyElementsOf(COUNTRY_ROWS);
        try (Connection c = t.admin()) {
            assertThat(BatchRunsTable.recordedWindows(c, slotRun, "campaign_slot"))
                    .containsExactly(W);
            assertThat(BatchRunsTable.recordedWindows(c, slotRun, "default")).isEmpty();
            assertThat(BatchRunsTable.recordedWindows(c, allRun, "default")).containsExactly(W + MINUTE);
            assertThat(BatchRunsTable.recordedWindows(c, allRun)).containsExactly(W + MINUTE);
            assertThat(BatchRunsTable.recordedWindows(c, allRun, "campaign_slot"))
                    .isEmpty();
        }
        assertThat(t.rowRunIds().get("2026-11-28T10:01:00Z/c1/ch1")).isEqualTo(allRun);
        assertThat(t.rowRunIds().get("2026-11-28T10:00:00Z/c1/ch1")).isEqualTo(rangeRun);

        // Both sets named, both recomputed by one run, in one transaction.
        LakeEvent later = event("later", "impression", W + 2 * MINUTE + SECOND, "c2", "ch1", 5, 51)
                .withAttributes(json("s2", "FR", 1))
                .receivedAfter(3_600_000);
        t.lake.write(List.of(later));
        topic.send(
                0,
                later,
                List.of(
                        new SetWindow("campaign_slot", W, W + 5 * MINUTE),
                        new SetWindow("default", W + 2 * MINUTE, W + 3 * MINUTE)));
        assertThat(t.backfill("affected", "--json")).as(t.lastErr).isZero();
        JsonNode json = new ObjectMapper().readTree(t.lastOut);
        assertThat(json.at("/sets/default/windows").toString()).isEqualTo("[\"2026-11-28T10:02:00Z\"]");
        assertThat(json.at("/sets/campaign_slot/windows").toString()).isEqualTo("[\"2026-11-28T10:00:00Z\"]");
        assertThat(json.at("/sets/channel_country/windows")).isEmpty();
        assertThat(json.get("windows").toString()).isEqualTo("[\"2026-11-28T10:00:00Z\",\"2026-11-28T10:02:00Z\"]");
        assertThat(t.batchRows(defaultSet))
                .contains(row(W + 2 * MINUTE, MINUTE, MeasureValues.of(1, 0, 0, 5, 1), "c2", "ch1"));
        assertThat(t.batchRows(slot))
                .contains(
                        row(W, 5 * MINUTE, MeasureValues.of(1, 5, 1), "c2", "s2"),
                        row(W, 5 * MINUTE, MeasureValues.of(1, 10 + 5, 2), "c2", "none"));
        assertThat(topic.committed()).containsExactly(Map.entry(0, 2L));
    }

    /** The sets each waiting record still names, in key order. */
    private List<List<String>> waitingSets() throws Exception {
        List<List<String>> out = new java.util.ArrayList<>();
        try (Connection c = t.admin();
                Statement s = c.createStatement();
                ResultSet rs =
                        s.executeQuery("SELECT record FROM backfill_waiting ORDER BY kafka_partition, kafka_offset")) {
            while (rs.next()) out.add(BackfillRecord.fromJson(rs.getString(1)).setNames());
        }
        return out;
    }

    static String json(String slot, String country, long quantity) {
        return "{\"slot_id\":\"" + slot + "\",\"country\":\"" + country + "\",\"quantity\":" + quantity + "}";
    }

    static WindowRow row(long start, long size, MeasureValues values, String... dimensions) {
        return new WindowRow(WindowKey.of(start, dimensions), start + size, values);
    }
}
