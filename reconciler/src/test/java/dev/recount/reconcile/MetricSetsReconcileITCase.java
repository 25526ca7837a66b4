package dev.recount.reconcile;

import static dev.recount.reconcile.testutils.ReconcileDb.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.ReconciliationRunsTable.Verdict;
import dev.recount.db.tables.StreamAttributionMetricsTable;
import dev.recount.db.tables.WindowMetricsView;
import dev.recount.reconcile.testutils.ReconcileDb;
import dev.recount.reconcile.testutils.ServedState;
import dev.recount.reconcile.testutils.ThreeSets;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One run over three metric sets ({@link ThreeSets}): the default set; campaign_slot (campaign × slot, 5-minute
 * windows, its own tolerance on clicks); channel_country (channel × country, a filtered count, spend, a sum of an
 * integer attribute, attribution). Each set's stream and batch rows hold a match, mismatches, a key only the batch
 * has and one only the stream has; every expected diff, correction and log entry is written out below by hand.
 */
class MetricSetsReconcileITCase {
    static final Instant W0 = Instant.parse("2026-11-28T10:00:00Z");
    static final Instant FROM = W0, TO = W0.plusSeconds(600);
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T02:00:00Z"), ZoneOffset.UTC);

    static final MetricSet DEFAULT = ThreeSets.DEFAULT, SLOT = ThreeSets.SLOT, COUNTRY = ThreeSets.COUNTRY;

    // default: impressions, clicks, conversions, spend_micros, events; 1-minute windows.
    static final WindowKey D_MATCH = key(W0, "camp-a", "web");
    static final WindowKey D_MISMATCH = key(W0, "camp-a", "app");
    static final WindowKey D_ONLY_BATCH = key(W0.plusSeconds(60), "camp-b", "web");
    static final WindowKey D_ONLY_STREAM = key(W0.plusSeconds(120), "camp-b", "app");
    /** Only a click differs: beyond the default set's exact tolerance. */
    static final WindowKey D_ONE_CLICK = key(W0.plusSeconds(180), "camp-c", "web");

    // campaign_slot: impressions, clicks, spend_micros, events; 5-minute windows; clicks within 1.
    static final WindowKey S_MATCH = key(W0, "camp-a", "top");
    static final WindowKey S_MISMATCH = key(W0, "camp-a", "side");
    /** Only a click differs: within campaign_slot's tolerance (clicks absolute 1). */
    static final WindowKey S_ONE_CLICK = key(W0.plusSeconds(300), "camp-b", "top");

    static final WindowKey S_ONLY_BATCH = key(W0.plusSeconds(300), "camp-c", "none");
    static final WindowKey S_ONLY_STREAM = key(W0, "camp-c", "top");

    // channel_country: eu_clicks, spend_micros, units, events; 1-minute windows; attribution.
    static final WindowKey C_MATCH = key(W0, "web", "DE");
    static final WindowKey C_MISMATCH = key(W0, "app", "FR");
    static final WindowKey C_ONLY_BATCH = key(W0.plusSeconds(60), "web", "US");
    static final WindowKey C_ONLY_STREAM = key(W0.plusSeconds(60), "app", "other");

    static MeasureValues v(long... values) {
        return MeasureValues.of(values);
    }

    @TempDir
    Path tmp;

    ReconcileDb db;

    @BeforeEach
    void setUp() throws Exception {
        db = ReconcileDb.fresh("metric_sets", ThreeSets.SETS);
        db.streamAll(
                DEFAULT,
                Map.of(
                        D_MATCH, v(100, 5, 1, 2_000_000, 106),
                        D_MISMATCH, v(10, 2, 0, 1_500_000, 12),
                        D_ONLY_STREAM, v(3, 1, 0, 333_333, 4),
                        D_ONE_CLICK, v(20, 1, 0, 400, 21)),
                1);
        db.streamAll(
                SLOT,
                Map.of(
                        S_MATCH, v(40, 2, 900, 42),
                        S_MISMATCH, v(30, 1, 500, 31),
                        S_ONE_CLICK, v(10, 3, 100, 13),
                        S_ONLY_STREAM, v(1, 0, 0, 1)),
                1);
        db.streamAll(
                COUNTRY,
                Map.of(
                        C_MATCH, v(2, 1_000, 3, 5),
                        C_MISMATCH, v(1, 500, 2, 4),
                        C_ONLY_STREAM, v(0, 20, 0, 2)),
                1);
    }

    @AfterEach
    void tearDown() {
        db.close();
    }

    /** The batch's rows of all three sets over [FROM, TO), one batch run naming the three. */
    Map<MetricSet, Map<WindowKey, MeasureValues>> batch() {
        Map<WindowKey, MeasureValues> d = new LinkedHashMap<>();
        d.put(D_MATCH, v(100, 5, 1, 2_000_000, 106));
        d.put(D_MISMATCH, v(10, 3, 0, 1_750_000, 13));
        d.put(D_ONLY_BATCH, v(7, 0, 0, 70_000, 7));
        d.put(D_ONE_CLICK, v(20, 2, 0, 400, 21));
        Map<WindowKey, MeasureValues> s = new LinkedHashMap<>();
        s.put(S_MATCH, v(40, 2, 900, 42));
        s.put(S_MISMATCH, v(30, 2, 800, 32));
        s.put(S_ONE_CLICK, v(10, 4, 100, 13));
        s.put(S_ONLY_BATCH, v(5, 0, 50, 5));
        Map<WindowKey, MeasureValues> c = new LinkedHashMap<>();
        c.put(C_MATCH, v(2, 1_000, 3, 5));
        c.put(C_MISMATCH, v(2, 700, 2, 6));
        c.put(C_ONLY_BATCH, v(0, 10, 1, 1));
        Map<MetricSet, Map<WindowKey, MeasureValues>> all = new LinkedHashMap<>();
        all.put(DEFAULT, d);
        all.put(SLOT, s);
        all.put(COUNTRY, c);
        return all;
    }

    /** channel_country's attribution: one key whose attributed clicks the stream missed. */
    void attribution(long batchRun) throws SQLException {
        SetTables t = new SetTables(COUNTRY);
        long end = C_MATCH.windowStartMillis() + 60_000;
        try (Connection c = db.admin()) {
            new StreamAttributionMetricsTable(t)
                    .upsert(
                            c,
                            List.of(new StreamAttributionMetricsTable.Row(
                                    new AttributionRow(C_MATCH, end, new AttributionMetrics(1, 0, 0, 10)), 1)));
            c.setAutoCommit(false);
            BatchAttributionMetricsTable batch = new BatchAttributionMetricsTable(t);
            batch.insertStaging(
                    c, batchRun, List.of(new AttributionRow(C_MATCH, end, new AttributionMetrics(2, 0, 0, 10))));
            batch.replaceFromStaging(
                    c, new BatchWindowMetricsTable.Range(FROM.toEpochMilli(), TO.toEpochMilli()), batchRun);
            c.commit();
        }
    }

    Reconciler reconciler(MetricSets sets) {
        return new Reconciler(
                db.reconcilerPool(), new Reconciler.Settings(ZoneOffset.UTC, sets, tmp.resolve("reports")), CLOCK);
    }

    static ReconciliationDiffsTable diffs(MetricSet set) {
        return new ReconciliationDiffsTable(new SetTables(set));
    }

    static CorrectionLogTable log(MetricSet set) {
        return new CorrectionLogTable(new SetTables(set));
    }

    static WindowMetricsView view(MetricSet set) {
        return new WindowMetricsView(new SetTables(set));
    }

    static String entry(CorrectionLogTable.Entry e) {
        return e.key().dimensions() + "@" + Instant.ofEpochMilli(e.key().windowStartMillis()) + " " + e.metric() + ":"
                + e.before() + "->" + e.after() + ":" + e.reason().wireName();
    }

    static ReconciliationDiffsTable.Row diff(
            MetricSet set, WindowKey k, Status status, boolean within, MeasureValues stream, MeasureValues batch) {
        return new ReconciliationDiffsTable.Row(
                k,
                k.windowStartMillis() + set.window().toMillis(),
                status,
                within,
                stream == null ? null : 1,
                stream,
                batch);
    }

    @Test
    void oneRunReconcilesEverySetExactlyOnItsOwnObjects() throws Exception {
        long batchRun = db.batchRange(FROM, TO, batch(), true);
        attribution(batchRun);

        RunResult r = reconciler(ThreeSets.SETS).reconcile(ScopeResolver.range(FROM, TO));

        assertThat(r.sets()).extracting(SetResult::name).containsExactly("default", "campaign_slot", "channel_country");
        assertThat(r.notCovered()).isEmpty();
        assertThat(r.verdict()).isEqualTo(Verdict.BEYOND_TOLERANCE);
        SetResult d = r.set("default"), s = r.set("campaign_slot"), c = r.set("channel_country");
        assertThat(d.comparison().range().counts()).isEqualTo(new KeyCounts(5, 1, 2, 1, 1, 4));
        assertThat(s.comparison().range().counts())
                .as("S_ONE_CLICK is within campaign_slot's tolerance")
                .isEqualTo(new KeyCounts(5, 1, 2, 1, 1, 3));
        assertThat(c.comparison().range().counts()).isEqualTo(new KeyCounts(4, 1, 1, 1, 1, 3));
        assertThat(List.of(d.verdict(), s.verdict(), c.verdict())).containsOnly(Verdict.BEYOND_TOLERANCE);
        // Totals per set: the stream's, the batch's, what is served now.
        assertThat(s.comparison().range().stream()).isEqualTo(v(81, 6, 1_500, 87));
        assertThat(s.comparison().range().batch())
                .isEqualTo(v(85, 8, 1_850, 92))
                .isEqualTo(s.finalTotals());
        assertThat(s.comparison().windows())
                .extracting(Comparison.WindowTotal::windowStartMillis, Comparison.WindowTotal::windowEndMillis)
                .as("5-minute windows")
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(
                                W0.toEpochMilli(), W0.plusSeconds(300).toEpochMilli()),
                        org.assertj.core.groups.Tuple.tuple(
                                W0.plusSeconds(300).toEpochMilli(),
                                W0.plusSeconds(600).toEpochMilli()));
        assertThat(s.comparison().days())
                .extracting(Comparison.DayTotal::value)
                .as("campaign_slot's first dimension per day")
                .containsExactly("camp-a", "camp-b", "camp-c");
        assertThat(c.comparison().days()).extracting(Comparison.DayTotal::value).containsExactly("app", "web");
        assertThat(c.comparison().range().batch()).isEqualTo(v(4, 1_710, 6, 12));
        assertThat(c.attribution().counts()).isEqualTo(new KeyCounts(1, 0, 1, 0, 0, 1));

        try (Connection conn = db.admin()) {
            assertThat(diffs(DEFAULT).readRun(conn, r.runId()))
                    .containsExactly(
                            diff(
                                    DEFAULT,
                                    D_MISMATCH,
                                    Status.MISMATCH,
                                    false,
                                    v(10, 2, 0, 1_500_000, 12),
                                    v(10, 3, 0, 1_750_000, 13)),
                            diff(DEFAULT, D_ONLY_BATCH, Status.MISSING_IN_STREAM, false, null, v(7, 0, 0, 70_000, 7)),
                            diff(DEFAULT, D_ONLY_STREAM, Status.MISSING_IN_BATCH, false, v(3, 1, 0, 333_333, 4), null),
                            diff(
                                    DEFAULT,
                                    D_ONE_CLICK,
                                    Status.MISMATCH,
                                    false,
                                    v(20, 1, 0, 400, 21),
                                    v(20, 2, 0, 400, 21)));
            assertThat(diffs(SLOT).readRun(conn, r.runId()))
                    .containsExactly(
                            diff(SLOT, S_MISMATCH, Status.MISMATCH, false, v(30, 1, 500, 31), v(30, 2, 800, 32)),
                            diff(SLOT, S_ONLY_STREAM, Status.MISSING_IN_BATCH, false, v(1, 0, 0, 1), null),
                            diff(SLOT, S_ONE_CLICK, Status.MISMATCH, true, v(10, 3, 100, 13), v(10, 4, 100, 13)),
                            diff(SLOT, S_ONLY_BATCH, Status.MISSING_IN_STREAM, false, null, v(5, 0, 50, 5)));
            assertThat(diffs(COUNTRY).readRun(conn, r.runId()))
                    .containsExactly(
                            diff(COUNTRY, C_MISMATCH, Status.MISMATCH, false, v(1, 500, 2, 4), v(2, 700, 2, 6)),
                            diff(COUNTRY, C_ONLY_STREAM, Status.MISSING_IN_BATCH, false, v(0, 20, 0, 2), null),
                            diff(COUNTRY, C_ONLY_BATCH, Status.MISSING_IN_STREAM, false, null, v(0, 10, 1, 1)));

            // Every served value that changed, per set, in key order, each key's measures in the set's order.
            assertThat(log(SLOT).readRun(conn, r.runId()))
                    .extracting(MetricSetsReconcileITCase::entry)
                    .containsExactly(
                            "[camp-a, side]@2026-11-28T10:00:00Z clicks:1->2:stream_mismatch",
                            "[camp-a, side]@2026-11-28T10:00:00Z spend_micros:500->800:stream_mismatch",
                            "[camp-a, side]@2026-11-28T10:00:00Z events:31->32:stream_mismatch",
                            "[camp-c, top]@2026-11-28T10:00:00Z impressions:1->null:missing_in_batch",
                            "[camp-c, top]@2026-11-28T10:00:00Z clicks:0->null:missing_in_batch",
                            "[camp-c, top]@2026-11-28T10:00:00Z spend_micros:0->null:missing_in_batch",
                            "[camp-c, top]@2026-11-28T10:00:00Z events:1->null:missing_in_batch",
                            "[camp-b, top]@2026-11-28T10:05:00Z clicks:3->4:stream_mismatch",
                            "[camp-c, none]@2026-11-28T10:05:00Z impressions:null->5:missing_in_stream",
                            "[camp-c, none]@2026-11-28T10:05:00Z clicks:null->0:missing_in_stream",
                            "[camp-c, none]@2026-11-28T10:05:00Z spend_micros:null->50:missing_in_stream",
                            "[camp-c, none]@2026-11-28T10:05:00Z events:null->5:missing_in_stream");
            assertThat(log(COUNTRY).readRun(conn, r.runId()))
                    .extracting(MetricSetsReconcileITCase::entry)
                    .containsExactly(
                            "[app, FR]@2026-11-28T10:00:00Z eu_clicks:1->2:stream_mismatch",
                            "[app, FR]@2026-11-28T10:00:00Z spend_micros:500->700:stream_mismatch",
                            "[app, FR]@2026-11-28T10:00:00Z events:4->6:stream_mismatch",
                            "[app, other]@2026-11-28T10:01:00Z eu_clicks:0->null:missing_in_batch",
                            "[app, other]@2026-11-28T10:01:00Z spend_micros:20->null:missing_in_batch",
                            "[app, other]@2026-11-28T10:01:00Z units:0->null:missing_in_batch",
                            "[app, other]@2026-11-28T10:01:00Z events:2->null:missing_in_batch",
                            "[web, US]@2026-11-28T10:01:00Z eu_clicks:null->0:missing_in_stream",
                            "[web, US]@2026-11-28T10:01:00Z spend_micros:null->10:missing_in_stream",
                            "[web, US]@2026-11-28T10:01:00Z units:null->1:missing_in_stream",
                            "[web, US]@2026-11-28T10:01:00Z events:null->1:missing_in_stream");
            assertThat(log(DEFAULT).readRun(conn, r.runId())).hasSize(3 + 5 + 5 + 1);
            assertThat(d.valuesCorrected()).isEqualTo(14);
            assertThat(s.valuesCorrected()).isEqualTo(12);
            assertThat(c.valuesCorrected()).as("with attribution's one entry").isEqualTo(12);
            assertThat(count(
                            conn,
                            "SELECT count(*) FROM channel_country__correction_log WHERE metric ="
                                    + " 'attributed_clicks' AND before_value = 1 AND after_value = 2"))
                    .isEqualTo(1);

            // Each set's view serves its batch values as final; a key only the stream had is hidden.
            assertThat(view(SLOT).readRange(conn, FROM.toEpochMilli(), TO.toEpochMilli()))
                    .extracting(row -> row.window().key().dimensions() + "="
                            + row.window().values() + ":" + row.source().wireName() + ":" + row.isFinal())
                    .containsExactly(
                            "[camp-a, side]=[30, 2, 800, 32]:batch:true",
                            "[camp-a, top]=[40, 2, 900, 42]:batch:true",
                            "[camp-b, top]=[10, 4, 100, 13]:batch:true",
                            "[camp-c, none]=[5, 0, 50, 5]:batch:true");
            assertThat(view(COUNTRY).totals(conn, FROM.toEpochMilli(), TO.toEpochMilli()))
                    .isEqualTo(c.finalTotals());
            assertThat(view(DEFAULT).totals(conn, FROM.toEpochMilli(), TO.toEpochMilli()))
                    .isEqualTo(d.finalTotals());
            assertThat(count(conn, "SELECT count(*) FROM campaign_slot__window_corrections_partitions"))
                    .as("a first run's table of its own, per set")
                    .isEqualTo(1);

            ReconciliationRunsTable.Run run =
                    ReconciliationRunsTable.find(conn, r.runId()).orElseThrow();
            assertThat(run.metricSets()).containsExactly("default", "campaign_slot", "channel_country");
            assertThat(run.keysCompared()).isEqualTo(14);
            assertThat(run.valuesCorrected()).isEqualTo(38);
            JsonNode totals = new ObjectMapper().readTree(run.totalsJson());
            assertThat(totals.at("/sets/campaign_slot/verdict").asText()).isEqualTo("beyond_tolerance");
            assertThat(totals.at("/sets/campaign_slot/keys/beyond_tolerance").asLong())
                    .isEqualTo(3);
            assertThat(totals.at("/sets/channel_country/final/units").asLong()).isEqualTo(6);
            assertThat(totals.at("/final/spend_micros").asLong()).isEqualTo(3_820_400);
        }

        // The report: one page with a part per set, a diffs file per set, every set in summary.json.
        Path dir = r.reportDir();
        assertThat(dir.toFile().list())
                .containsExactlyInAnyOrder(
                        "report.html",
                        "summary.json",
                        "diffs.csv",
                        "diffs-campaign_slot.csv",
                        "diffs-channel_country.csv");
        String html = Files.readString(dir.resolve("report.html"));
        assertThat(html)
                .containsSubsequence(
                        "id=\"run-verdict\"",
                        "<section class=\"set\" id=\"set-default\">",
                        "<section id=\"ctr\">",
                        "<section class=\"set\" id=\"set-campaign_slot\">",
                        "<section id=\"campaign_slot-ctr\">",
                        "<section class=\"set\" id=\"set-channel_country\">",
                        "<section id=\"channel_country-attribution\">")
                .contains("<code>campaign_slot__window_corrections</code>");
        assertThat(html.substring(html.indexOf("id=\"set-channel_country\""))).doesNotContain("-ctr\"");
        assertThat(Files.readString(dir.resolve("diffs-campaign_slot.csv"), StandardCharsets.UTF_8))
                .startsWith("row_type,window_start,window_end,day,campaign_id,slot_id,")
                .contains("\r\nkey,2026-11-28T10:05:00Z,2026-11-28T10:10:00Z,2026-11-28,camp-b,top,mismatch,true,1,")
                .contains("\r\ncampaign_day_total,,,2026-11-28,camp-a,,,false,,2,1,1,0,0,1,");
        JsonNode summary =
                new ObjectMapper().readTree(dir.resolve("summary.json").toFile());
        assertThat(summary.get("metric_sets").toString())
                .isEqualTo("[\"default\",\"campaign_slot\",\"channel_country\"]");
        assertThat(summary.at("/sets/campaign_slot/keys/compared").asLong()).isEqualTo(5);
        assertThat(summary.at("/sets/campaign_slot/ctr/stream").decimalValue()).isEqualByComparingTo("0.074074074074");
        assertThat(summary.at("/sets/channel_country/attribution/keys/mismatched")
                        .asLong())
                .isEqualTo(1);
        assertThat(summary.at("/keys/compared").asLong())
                .as("the default set's, at the top")
                .isEqualTo(5);
    }

    @Test
    void aRerunChangesNothingAndALaterBatchOfAFinalizedKeyIsCorrectedInItsSetOnly() throws Exception {
        db.batchRange(FROM, TO, batch(), true);
        Scope range = ScopeResolver.range(FROM, TO);
        RunResult first = reconciler(ThreeSets.SETS).reconcile(range);
        Map<String, ServedState> served = served();

        RunResult again = reconciler(ThreeSets.SETS).reconcile(range);
        assertThat(again.keysFinalized()).isZero();
        assertThat(again.corrections()).isEmpty();
        assertThat(served()).as("nothing any set serves was written").isEqualTo(served);
        try (Connection conn = db.admin()) {
            for (MetricSet set : ThreeSets.SETS.sets()) {
                assertThat(again.set(set.name()).comparison())
                        .as(set.name())
                        .isEqualTo(first.set(set.name()).comparison());
                assertThat(diffs(set).readRun(conn, again.runId()))
                        .as(set.name())
                        .isEqualTo(diffs(set).readRun(conn, first.runId()));
                assertThat(log(set).readRun(conn, again.runId())).isEmpty();
            }
        }

        // A later batch changes one finalized key of campaign_slot (in its second 5-minute window) only.
        Map<MetricSet, Map<WindowKey, MeasureValues>> later = batch();
        later.get(SLOT).put(S_ONE_CLICK, v(10, 5, 120, 15));
        db.batchRange(FROM, TO, later, true);
        RunResult third = reconciler(ThreeSets.SETS).reconcile(range);

        assertThat(third.set("default").keysFinalized()).isZero();
        assertThat(third.set("channel_country").keysFinalized()).isZero();
        assertThat(third.set("campaign_slot").keysFinalized()).isEqualTo(1);
        try (Connection conn = db.admin()) {
            assertThat(log(SLOT).readRun(conn, third.runId()))
                    .extracting(MetricSetsReconcileITCase::entry)
                    .containsExactly(
                            "[camp-b, top]@2026-11-28T10:05:00Z clicks:4->5:batch_changed",
                            "[camp-b, top]@2026-11-28T10:05:00Z spend_micros:100->120:batch_changed",
                            "[camp-b, top]@2026-11-28T10:05:00Z events:13->15:batch_changed");
            assertThat(log(DEFAULT).readRun(conn, third.runId())).isEmpty();
            assertThat(log(COUNTRY).readRun(conn, third.runId())).isEmpty();
            assertThat(view(SLOT).find(conn, S_ONE_CLICK).orElseThrow().window().values())
                    .isEqualTo(v(10, 5, 120, 15));
            // The stream's one click off is now two: beyond campaign_slot's tolerance.
            assertThat(diffs(SLOT).readRun(conn, third.runId()))
                    .filteredOn(row -> row.key().equals(S_ONE_CLICK))
                    .extracting(ReconciliationDiffsTable.Row::withinTolerance)
                    .containsExactly(false);
        }
    }

    @Test
    void aSetTheBatchDidNotCoverIsLeftOutAndNamedWhileTheOthersAreReconciled() throws Exception {
        Map<MetricSet, Map<WindowKey, MeasureValues>> rows = batch();
        rows.remove(COUNTRY);
        db.batchRange(FROM, TO, rows, true);
        ServedState countryBefore = served().get("channel_country");

        RunResult r = reconciler(ThreeSets.SETS).reconcile(ScopeResolver.range(FROM, TO));

        assertThat(r.sets()).extracting(SetResult::name).containsExactly("default", "campaign_slot");
        assertThat(r.notCovered())
                .containsOnlyKeys("channel_country")
                .extractingByKey("channel_country")
                .asString()
                .isEqualTo("no succeeded batch run covers [2026-11-28T10:00:00Z, 2026-11-28T10:10:00Z) of"
                        + " [2026-11-28T10:00:00Z, 2026-11-28T10:10:00Z) for metric set channel_country: run"
                        + " `./recount backfill range --set channel_country --from 2026-11-28T10:00:00Z"
                        + " --to 2026-11-28T10:10:00Z` (or `backfill nightly`) for it first, then reconcile");
        assertThat(served().get("channel_country")).as("nothing of it written").isEqualTo(countryBefore);
        try (Connection conn = db.admin()) {
            assertThat(ReconciliationRunsTable.find(conn, r.runId())
                            .orElseThrow()
                            .metricSets())
                    .as("the sets it reconciled: nothing counts the range as reconciled for channel_country")
                    .containsExactly("default", "campaign_slot");
            assertThat(view(SLOT).find(conn, S_MISMATCH).orElseThrow().isFinal())
                    .isTrue();
        }
        JsonNode summary = new ObjectMapper()
                .readTree(r.reportDir().resolve("summary.json").toFile());
        assertThat(summary.at("/not_covered/channel_country").asText()).contains("--set channel_country");
        assertThat(Files.readString(r.reportDir().resolve("report.html")))
                .contains("not reconciled: no succeeded batch run covers");

        // A run of that set alone, before its backfill: refused as a run of the default set alone always was.
        assertThatThrownBy(() ->
                        reconciler(ThreeSets.SETS.only("channel_country")).reconcile(ScopeResolver.range(FROM, TO)))
                .isInstanceOf(NotCoveredException.class)
                .hasMessageStartingWith("no succeeded batch run covers")
                .hasMessageContaining("for metric set channel_country");
    }

    @Test
    void theCommandLineReconcilesOneSetWithSetAndSaysWhichSetsItLeftOut() throws Exception {
        Path sets = Files.writeString(tmp.resolve("metric-sets.yaml"), ThreeSets.YAML);
        Path config = db.configFile(
                tmp, "time-zone=UTC", "reconcile.report-dir=" + tmp.resolve("cli-reports"), "metric-sets.file=" + sets);
        Map<MetricSet, Map<WindowKey, MeasureValues>> rows = batch();
        rows.remove(COUNTRY);
        db.batchRange(Instant.parse("2026-11-28T00:00:00Z"), Instant.parse("2026-11-29T00:00:00Z"), rows, true);
        Map<String, ServedState> before = served();

        // --set: that set alone; the others' objects untouched.
        String[] r = cli(config, "--date", "2026-11-28", "--set", "campaign_slot", "--json");
        assertThat(r[0]).isEqualTo(String.valueOf(ExitCode.BEYOND_TOLERANCE.code()));
        JsonNode json = new ObjectMapper().readTree(r[1]);
        assertThat(json.get("metric_sets").toString()).isEqualTo("[\"campaign_slot\"]");
        assertThat(json.has("keys")).as("no default set in this run").isFalse();
        assertThat(json.at("/sets/campaign_slot/keys/compared").asLong()).isEqualTo(5);
        assertThat(json.at("/sets/campaign_slot/totals/clicks/stream_minus_batch")
                        .asLong())
                .isEqualTo(-2);
        Map<String, ServedState> after = served();
        assertThat(after.get("default")).isEqualTo(before.get("default"));
        assertThat(after.get("channel_country")).isEqualTo(before.get("channel_country"));
        assertThat(after.get("campaign_slot")).isNotEqualTo(before.get("campaign_slot"));

        // Every set: channel_country has no backfill; the others are reconciled, the set is named, exit 4.
        r = cli(config, "--date", "2026-11-28");
        assertThat(r[0]).isEqualTo(String.valueOf(ExitCode.BEYOND_TOLERANCE.code()));
        assertThat(r[1])
                .contains("  set default: BEYOND TOLERANCE")
                .contains("  set campaign_slot: BEYOND TOLERANCE")
                .contains("    spend stream ")
                .contains("  set channel_country: NOT RECONCILED: no succeeded batch run covers");
        assertThat(r[2].strip())
                .startsWith("recount reconcile: refused: no succeeded batch run covers")
                .contains("--set channel_country");
        String[] dates = cli(config, "nightly-dates", "--since", "2026-11-28", "--until", "2026-11-28");
        assertThat(dates[1].lines().toList()).as("pending for channel_country").containsExactly("2026-11-28");

        // Its backfill lands: a run of that set alone makes the day done for every set.
        db.batchRange(
                Instant.parse("2026-11-28T00:00:00Z"),
                Instant.parse("2026-11-29T00:00:00Z"),
                Map.of(COUNTRY, batch().get(COUNTRY)),
                true);
        r = cli(config, "--date", "2026-11-28", "--set", "channel_country");
        assertThat(r[0]).isEqualTo(String.valueOf(ExitCode.BEYOND_TOLERANCE.code()));
        assertThat(r[1]).contains("  set channel_country: BEYOND TOLERANCE").doesNotContain("set default");
        dates = cli(config, "nightly-dates", "--since", "2026-11-28", "--until", "2026-11-28");
        assertThat(dates[1]).isEmpty();

        r = cli(config, "--date", "2026-11-28", "--set", "no_such_set");
        assertThat(r[0]).isEqualTo(String.valueOf(ExitCode.USAGE.code()));
        assertThat(r[2]).contains("no metric set named 'no_such_set'");

        // A set declared since the schema was migrated has no tables yet: nothing is run or recorded.
        Files.writeString(sets, ThreeSets.YAML + """
                          - name: late_set
                            dimensions: [campaign_id]
                            measures:
                              - {name: clicks, kind: count, where: {event_type: click}}
                        """);
        long runs;
        try (Connection conn = db.admin()) {
            runs = count(conn, "SELECT count(*) FROM reconciliation_runs");
        }
        r = cli(config, "--date", "2026-11-28");
        assertThat(r[0]).isEqualTo(String.valueOf(ExitCode.USAGE.code()));
        assertThat(r[2]).contains("metric set late_set", "run ./recount migrate");
        try (Connection conn = db.admin()) {
            assertThat(count(conn, "SELECT count(*) FROM reconciliation_runs")).isEqualTo(runs);
        }
    }

    @Test
    void aBatchRunsWindowsAreReconciledPerSet() throws Exception {
        db.batchRange(FROM, TO, batch(), true);
        reconciler(ThreeSets.SETS).reconcile(ScopeResolver.range(FROM, TO));
        // An affected run recomputed the default set's W0 + 1m and campaign_slot's second 5-minute window.
        long affected = db.batchAffectedOfSets(Map.of(
                DEFAULT, Map.of(D_ONLY_BATCH, v(8, 0, 0, 80_000, 8)),
                SLOT, Map.of(S_ONE_CLICK, v(10, 4, 100, 13), S_ONLY_BATCH, v(6, 0, 60, 6))));
        Scope scope;
        try (Connection c = db.reconcilerPool().getConnection()) {
            scope = ScopeResolver.batchRun(c, affected);
        }
        assertThat(scope.sets()).containsExactly("campaign_slot", "default");
        assertThat(scope.of("default").windowStarts())
                .containsExactly(W0.plusSeconds(60).toEpochMilli());
        assertThat(scope.of("campaign_slot").windowStarts())
                .containsExactly(W0.plusSeconds(300).toEpochMilli());

        RunResult r = reconciler(ThreeSets.SETS).reconcile(scope);

        assertThat(r.sets()).extracting(SetResult::name).containsExactly("default", "campaign_slot");
        assertThat(r.set("default").comparison().range().counts()).isEqualTo(new KeyCounts(1, 0, 0, 1, 0, 1));
        assertThat(r.set("campaign_slot").comparison().range().counts())
                .as("S_ONE_CLICK and S_ONLY_BATCH, in the window the run named")
                .isEqualTo(new KeyCounts(2, 0, 1, 1, 0, 1));
        try (Connection conn = db.admin()) {
            assertThat(log(DEFAULT).readRun(conn, r.runId()))
                    .extracting(MetricSetsReconcileITCase::entry)
                    .containsExactly(
                            "[camp-b, web]@2026-11-28T10:01:00Z impressions:7->8:batch_changed",
                            "[camp-b, web]@2026-11-28T10:01:00Z spend_micros:70000->80000:batch_changed",
                            "[camp-b, web]@2026-11-28T10:01:00Z events:7->8:batch_changed");
            assertThat(log(SLOT).readRun(conn, r.runId()))
                    .extracting(MetricSetsReconcileITCase::entry)
                    .containsExactly(
                            "[camp-c, none]@2026-11-28T10:05:00Z impressions:5->6:batch_changed",
                            "[camp-c, none]@2026-11-28T10:05:00Z spend_micros:50->60:batch_changed",
                            "[camp-c, none]@2026-11-28T10:05:00Z events:5->6:batch_changed");
            ReconciliationRunsTable.Run run =
                    ReconciliationRunsTable.find(conn, r.runId()).orElseThrow();
            assertThat(run.batchRunId()).isEqualTo(affected);
            assertThat(run.metricSets()).containsExactly("default", "campaign_slot");
        }
    }

    /** Runs {@code reconcile} in-process with {@code config}: {exit code, stdout, stderr}. */
    String[] cli(Path config, String... args) {
        StringWriter o = new StringWriter(), e = new StringWriter();
        String[] all;
        if (args[0].equals("nightly-dates")) {
            all = java.util.stream.Stream.concat(
                            java.util.Arrays.stream(args), java.util.stream.Stream.of("--config", config.toString()))
                    .toArray(String[]::new);
        } else {
            all = java.util.stream.Stream.concat(
                            java.util.stream.Stream.of("--config", config.toString()), java.util.Arrays.stream(args))
                    .toArray(String[]::new);
        }
        int code = ReconcileMain.execute(
                new CommandEnvironment(db.environment(), CLOCK), new PrintWriter(o), new PrintWriter(e), all);
        return new String[] {String.valueOf(code), o.toString(), e.toString()};
    }

    /** What each set serves, fingerprinted. */
    Map<String, ServedState> served() throws SQLException {
        Map<String, ServedState> states = new LinkedHashMap<>();
        try (Connection c = db.admin()) {
            for (MetricSet set : ThreeSets.SETS.sets()) states.put(set.name(), ServedState.read(c, new SetTables(set)));
        }
        return states;
    }

    static long count(Connection c, String sql) throws SQLException {
        try (var st = c.createStatement();
                var rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
