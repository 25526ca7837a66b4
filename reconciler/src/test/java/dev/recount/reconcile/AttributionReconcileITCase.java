package dev.recount.reconcile;

import static dev.recount.reconcile.testutils.ReconcileDb.key;
import static dev.recount.reconcile.testutils.ReconcileDb.m;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.AttributionRow;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.StreamAttributionMetricsTable;
import dev.recount.reconcile.report.ReportWriter;
import dev.recount.reconcile.testutils.DefaultSet;
import dev.recount.reconcile.testutils.ReconcileDb;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Attribution metrics diffed, corrected and logged with the window metrics, and the report's section for them. */
class AttributionReconcileITCase {
    static final Instant W0 = Instant.parse("2026-11-28T10:00:00Z");
    static final Instant TO = W0.plusSeconds(600);
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T02:00:00Z"), ZoneOffset.UTC);
    static final WindowKey MATCH = key(W0, "camp-a", "web");
    static final WindowKey MISMATCH = key(W0, "camp-a", "app");
    static final WindowKey ONLY_BATCH = key(W0.plusSeconds(60), "camp-b", "web");
    static final WindowKey ONLY_STREAM = key(W0.plusSeconds(120), "camp-b", "app");

    @TempDir
    Path reports;

    ReconcileDb db;

    @BeforeEach
    void setUp() throws Exception {
        db = ReconcileDb.fresh("attr_reconcile");
        // The window metrics agree, so whatever differs below is attribution's.
        db.stream(MATCH, m(1, 1, 0, 10, 2), 1);
        long batchRun = db.batchRange(W0, TO, Map.of(MATCH, m(1, 1, 0, 10, 2)));
        try (Connection c = db.admin()) {
            new StreamAttributionMetricsTable(DefaultSet.TABLES)
                    .upsert(
                            c,
                            List.of(
                                    stream(MATCH, new AttributionMetrics(3, 1, 1, 900)),
                                    stream(MISMATCH, new AttributionMetrics(1, 0, 2, 100)),
                                    stream(ONLY_STREAM, new AttributionMetrics(0, 0, 1, 0))));
            c.setAutoCommit(false);
            new BatchAttributionMetricsTable(DefaultSet.TABLES)
                    .insertStaging(
                            c,
                            batchRun,
                            List.of(
                                    row(MATCH, new AttributionMetrics(3, 1, 1, 900)),
                                    row(MISMATCH, new AttributionMetrics(2, 0, 1, 350)),
                                    row(ONLY_BATCH, new AttributionMetrics(1, 0, 0, 5))));
            new BatchAttributionMetricsTable(DefaultSet.TABLES)
                    .replaceFromStaging(
                            c, new BatchWindowMetricsTable.Range(W0.toEpochMilli(), TO.toEpochMilli()), batchRun);
            c.commit();
        }
    }

    @AfterEach
    void tearDown() {
        db.close();
    }

    static AttributionRow row(WindowKey k, AttributionMetrics m) {
        return new AttributionRow(k, k.windowStartMillis() + 60_000, m);
    }

    static StreamAttributionMetricsTable.Row stream(WindowKey k, AttributionMetrics m) {
        return new StreamAttributionMetricsTable.Row(row(k, m), 1);
    }

    Reconciler reconciler() {
        return new Reconciler(
                db.reconcilerPool(), new Reconciler.Settings(ZoneOffset.UTC, DefaultSet.SETS, reports), CLOCK);
    }

    @Test
    void attributionIsDiffedCorrectedLoggedAndReported() throws Exception {
        RunResult r = reconciler().reconcile(ScopeResolver.range(W0, TO));

        // The window metrics agree; attribution does not, so the run is beyond tolerance.
        assertThat(r.set(DefaultSet.NAME).comparison().range().counts().differing())
                .isZero();
        assertThat(r.verdict()).isEqualTo(ReconciliationRunsTable.Verdict.BEYOND_TOLERANCE);

        assertThat(query("SELECT campaign_id || '/' || channel_id || ':' || status FROM attribution_diffs"
                        + " WHERE run_id = " + r.runId() + " ORDER BY window_start, campaign_id, channel_id"))
                .containsExactly("camp-a/app:mismatch", "camp-b/web:missing_in_stream", "camp-b/app:missing_in_batch");
        // Served: batch wins; the key only the stream had is hidden.
        assertThat(query(
                        "SELECT campaign_id || '/' || channel_id || '=' || attributed_clicks || ',' || unattributed_clicks"
                                + " || ',' || attributed_spend_micros || ',' || source || ',' || is_final FROM attribution_metrics"
                                + " ORDER BY window_start, campaign_id, channel_id"))
                .containsExactly(
                        "camp-a/app=2,1,350,batch,true",
                        "camp-a/web=3,1,900,batch,true",
                        "camp-b/web=1,0,5,batch,true");
        // Logged under the attribution metric's name, with the window metrics' reasons.
        assertThat(query(
                        "SELECT campaign_id || '/' || channel_id || ' ' || metric || ' ' || coalesce(before_value::text, '-')"
                                + " || '->' || coalesce(after_value::text, '-') || ' ' || reason FROM correction_log WHERE reconciliation_run_id = "
                                + r.runId() + " ORDER BY window_start, campaign_id, channel_id, metric"))
                .containsExactly(
                        "camp-a/app attributed_clicks 1->2 stream_mismatch",
                        "camp-a/app attributed_spend_micros 100->350 stream_mismatch",
                        "camp-a/app unattributed_clicks 2->1 stream_mismatch",
                        "camp-b/web attributed_clicks -->1 missing_in_stream",
                        "camp-b/web attributed_conversions -->0 missing_in_stream",
                        "camp-b/web attributed_spend_micros -->5 missing_in_stream",
                        "camp-b/web unattributed_clicks -->0 missing_in_stream",
                        "camp-b/app attributed_clicks 0->- missing_in_batch",
                        "camp-b/app attributed_conversions 0->- missing_in_batch",
                        "camp-b/app attributed_spend_micros 0->- missing_in_batch",
                        "camp-b/app unattributed_clicks 1->- missing_in_batch");
        assertThat(r.valuesCorrected()).isEqualTo(11);
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.LOG.readRun(c, r.runId()))
                    .as("window metrics' entries only")
                    .isEmpty();
        }

        String html = Files.readString(r.reportDir().resolve(ReportWriter.HTML));
        assertThat(html)
                .contains("<section id=\"attribution\"><h2>Attribution</h2>")
                .contains("1 match, 1 differ, 1 only in batch, 1 only in stream");
        JsonNode summary = new ObjectMapper()
                .readTree(r.reportDir().resolve(ReportWriter.JSON).toFile());
        assertThat(summary.at("/attribution/keys/mismatched").asLong()).isEqualTo(1);
        assertThat(summary.at("/attribution/stream/attributed_spend_micros").asLong())
                .isEqualTo(1_000);
        assertThat(summary.at("/attribution/batch/attributed_spend_micros").asLong())
                .isEqualTo(1_255);

        // A second run finds the same differences, but nothing left to correct.
        RunResult again = reconciler().reconcile(ScopeResolver.range(W0, TO));
        assertThat(again.valuesCorrected()).isZero();
    }

    @Test
    void aDryRunCorrectsNothing() throws Exception {
        RunResult r = reconciler().reconcile(ScopeResolver.range(W0, TO), Reconciler.Mode.DRY_RUN);
        assertThat(r.valuesCorrected()).isEqualTo(11);
        assertThat(query("SELECT count(*) FROM attribution_corrections")).containsExactly("0");
        assertThat(query("SELECT count(*) FROM correction_log")).containsExactly("0");
    }

    @Test
    void withoutAttributionRowsTheReportHasNoSection() throws Exception {
        try (Connection c = db.admin();
                Statement st = c.createStatement()) {
            st.execute("DELETE FROM stream_attribution_metrics");
            st.execute("DELETE FROM batch_attribution_metrics");
        }
        RunResult r = reconciler().reconcile(ScopeResolver.range(W0, TO));
        assertThat(r.verdict()).isEqualTo(ReconciliationRunsTable.Verdict.WITHIN_TOLERANCE);
        assertThat(Files.readString(r.reportDir().resolve(ReportWriter.HTML))).doesNotContain("id=\"attribution\"");
    }

    List<String> query(String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.admin();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) out.add(rs.getString(1));
        }
        return out;
    }
}
