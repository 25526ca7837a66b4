package dev.recount.reconcile;

import static dev.recount.reconcile.testutils.ReconcileDb.key;
import static dev.recount.reconcile.testutils.ReconcileDb.m;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import com.zaxxer.hikari.HikariDataSource;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowKey;
import dev.recount.db.Role;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.CorrectionLogTable;
import dev.recount.db.tables.CorrectionLogTable.Reason;
import dev.recount.db.tables.ReconciliationDiffsTable;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import dev.recount.db.tables.ReconciliationRunsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowCorrectionsTable;
import dev.recount.db.tables.WindowMetricsView;
import dev.recount.db.tables.WindowRow;
import dev.recount.reconcile.report.ReportWriter;
import dev.recount.reconcile.testutils.DefaultSet;
import dev.recount.reconcile.testutils.ReconcileDb;
import dev.recount.reconcile.testutils.ServedState;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Classification, diffs, totals and corrections on prepared stream and batch rows, against a real PostgreSQL. */
class ReconcilerITCase {
    /** 23:58 on 2026-11-28 in Auckland (UTC+13): W2 is the first window of the 29th there. */
    static final ZoneId ZONE = ZoneId.of("Pacific/Auckland");

    static final Instant W0 = Instant.parse("2026-11-28T10:58:00Z");
    static final Instant W1 = W0.plusSeconds(60);
    static final Instant W2 = W0.plusSeconds(120);
    static final Instant FROM = W0;
    static final Instant TO = W0.plusSeconds(600);
    static final Instant OUTSIDE = TO.plusSeconds(3600);
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T02:00:00Z"), ZoneOffset.UTC);

    static final WindowKey MATCH = key(W0, "camp-a", "web");
    static final WindowKey MISMATCH = key(W0, "camp-a", "app");
    static final WindowKey ONLY_BATCH = key(W1, "camp-b", "web");
    static final WindowKey ONLY_STREAM = key(W2, "camp-b", "app");
    static final WindowKey NOT_IN_RANGE = key(OUTSIDE, "camp-a", "web");

    static final MeasureValues MATCH_V = m(100, 5, 1, 2_000_000, 106);
    static final MeasureValues MISMATCH_S = m(10, 2, 0, 1_500_000, 12);
    static final MeasureValues MISMATCH_B = m(10, 3, 0, 1_750_000, 13);
    static final MeasureValues ONLY_BATCH_V = m(7, 0, 0, 70_000, 7);
    static final MeasureValues ONLY_STREAM_V = m(3, 1, 0, 333_333, 4);

    @TempDir
    Path reports;

    ReconcileDb db;

    @BeforeEach
    void setUp() throws Exception {
        db = ReconcileDb.fresh("reconciler");
        fill(db);
    }

    static void fill(ReconcileDb db) throws SQLException {
        db.stream(MATCH, MATCH_V, 1);
        db.stream(MISMATCH, MISMATCH_S, 2);
        db.stream(ONLY_STREAM, ONLY_STREAM_V, 1);
        db.stream(NOT_IN_RANGE, m(1, 0, 0, 10, 1), 1);
        db.batchRange(FROM, TO, batchRows(MISMATCH_B));
        db.batchRange(OUTSIDE, OUTSIDE.plusSeconds(60), Map.of(NOT_IN_RANGE, m(2, 0, 0, 20, 2)));
    }

    @AfterEach
    void tearDown() {
        db.close();
    }

    static Map<WindowKey, MeasureValues> batchRows(MeasureValues mismatchBatch) {
        Map<WindowKey, MeasureValues> rows = new LinkedHashMap<>();
        rows.put(MATCH, MATCH_V);
        rows.put(MISMATCH, mismatchBatch);
        rows.put(ONLY_BATCH, ONLY_BATCH_V);
        return rows;
    }

    Reconciler reconciler(MetricSets sets) {
        return new Reconciler(db.reconcilerPool(), new Reconciler.Settings(ZONE, sets, reports), CLOCK);
    }

    @Test
    void runsAsTheSchemasReconcilerLoginWithItsRolesPrivileges() throws Exception {
        try (Connection c = db.reconcilerPool().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT current_user, session_user, r.rolsuper,"
                        + " pg_has_role(current_user, '" + Role.RECONCILER.roleName(db.schema()) + "', 'USAGE')"
                        + " FROM pg_roles r WHERE r.rolname = current_user")) {
            rs.next();
            assertThat(rs.getString(1))
                    .isEqualTo(Role.RECONCILER.loginName(db.schema()))
                    .isEqualTo(rs.getString(2));
            assertThat(rs.getBoolean(3)).as("superuser").isFalse();
            assertThat(rs.getBoolean(4))
                    .as("holds the schema's reconciler role")
                    .isTrue();
        }
    }

    @Test
    void refusesARangeWhereTheStreamRanWithAnotherWindowSize() throws Exception {
        WindowKey twoMinutes = key(W0.plusSeconds(240), "camp-c", "web");
        try (Connection c = db.admin()) {
            DefaultSet.STREAM.upsert(
                    c,
                    List.of(new StreamWindowMetricsTable.Row(
                            new WindowRow(twoMinutes, twoMinutes.windowStartMillis() + 120_000, m(1, 0, 0, 1, 1)), 1)));
        }
        ServedState before = servedState();

        assertThatThrownBy(() -> reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO)))
                .isInstanceOf(NotCoveredException.class)
                .hasMessageContaining("stream_window_metrics holds windows of 2m in this range, not 1m");
        assertThat(servedState()).as("nothing finalized or corrected").isEqualTo(before);
    }

    @Test
    void classifiesEveryKeyWithExactDiffsAndTotals() throws Exception {
        RunResult r = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));

        KeyCounts k = r.set(DefaultSet.NAME).comparison().range().counts();
        assertThat(k).isEqualTo(new KeyCounts(4, 1, 1, 1, 1, 3));
        assertThat(r.verdict()).isEqualTo(ReconciliationRunsTable.Verdict.BEYOND_TOLERANCE);
        assertThat(r.set(DefaultSet.NAME).comparison().range().stream())
                .isEqualTo(MATCH_V.plus(MISMATCH_S).plus(ONLY_STREAM_V));
        assertThat(r.set(DefaultSet.NAME).comparison().range().batch())
                .isEqualTo(MATCH_V.plus(MISMATCH_B).plus(ONLY_BATCH_V));
        assertThat(r.set(DefaultSet.NAME).finalTotals())
                .isEqualTo(r.set(DefaultSet.NAME).comparison().range().batch());
        assertThat(r.set(DefaultSet.NAME).comparison().range().difference(DefaultSet.SPEND))
                .isEqualTo(BigInteger.valueOf(2_000_000 + 1_500_000 + 333_333 - (2_000_000 + 1_750_000 + 70_000)));

        // Per window.
        assertThat(r.set(DefaultSet.NAME).comparison().windows())
                .extracting(Comparison.WindowTotal::windowStartMillis)
                .containsExactly(W0.toEpochMilli(), W1.toEpochMilli(), W2.toEpochMilli());
        Comparison.WindowTotal w0 =
                r.set(DefaultSet.NAME).comparison().windows().get(0);
        assertThat(w0.windowEndMillis()).isEqualTo(W0.plusSeconds(60).toEpochMilli());
        assertThat(w0.totals().counts()).isEqualTo(new KeyCounts(2, 1, 1, 0, 0, 1));
        assertThat(w0.totals().stream()).isEqualTo(MATCH_V.plus(MISMATCH_S));
        assertThat(w0.totals().batch()).isEqualTo(MATCH_V.plus(MISMATCH_B));
        assertThat(r.set(DefaultSet.NAME).comparison().windows().get(2).totals().batch())
                .isEqualTo(MeasureValues.zeros(5));

        // Per campaign per day, days in Auckland time: W2 (11:00Z) is already the 29th there.
        assertThat(r.set(DefaultSet.NAME).comparison().days())
                .extracting(c -> c.value() + "@" + c.day())
                .containsExactly("camp-a@2026-11-28", "camp-b@2026-11-28", "camp-b@2026-11-29");
        Comparison.DayTotal b28 = r.set(DefaultSet.NAME).comparison().days().get(1);
        assertThat(b28.totals().counts()).isEqualTo(new KeyCounts(1, 0, 0, 1, 0, 1));
        assertThat(b28.totals().stream()).isEqualTo(MeasureValues.zeros(5));
        assertThat(b28.totals().batch()).isEqualTo(ONLY_BATCH_V);

        try (Connection c = db.admin()) {
            List<ReconciliationDiffsTable.Row> diffs = DefaultSet.DIFFS.readRun(c, r.runId());
            assertThat(diffs)
                    .containsExactly(
                            new ReconciliationDiffsTable.Row(
                                    MISMATCH, W1.toEpochMilli(), Status.MISMATCH, false, 2, MISMATCH_S, MISMATCH_B),
                            new ReconciliationDiffsTable.Row(
                                    ONLY_BATCH,
                                    W2.toEpochMilli(),
                                    Status.MISSING_IN_STREAM,
                                    false,
                                    null,
                                    null,
                                    ONLY_BATCH_V),
                            new ReconciliationDiffsTable.Row(
                                    ONLY_STREAM,
                                    W2.plusSeconds(60).toEpochMilli(),
                                    Status.MISSING_IN_BATCH,
                                    false,
                                    1,
                                    ONLY_STREAM_V,
                                    null));

            ReconciliationRunsTable.Run run =
                    ReconciliationRunsTable.find(c, r.runId()).orElseThrow();
            assertThat(run.status()).isEqualTo(ReconciliationRunsTable.Status.SUCCEEDED);
            assertThat(run.verdict()).isEqualTo(ReconciliationRunsTable.Verdict.BEYOND_TOLERANCE);
            assertThat(List.of(
                            run.keysCompared(),
                            run.keysMatched(),
                            run.keysMismatched(),
                            run.keysMissingInStream(),
                            run.keysMissingInBatch(),
                            run.valuesCorrected()))
                    .containsExactly(4L, 1L, 1L, 1L, 1L, 13L);
            assertThat(run.totalsJson()).contains("\"spend_micros\": 3820000");
            assertThat(run.reportDir()).isEqualTo(r.reportDir().toString());
        }
        assertThat(r.reportDir().getFileName().toString()).isEqualTo("run-" + r.runId() + "-20261128T105800Z");
        assertThat(r.reportDir().resolve("report.html")).isRegularFile();
        assertThat(r.reportDir().resolve("diffs.csv")).isRegularFile();
        assertThat(r.reportDir().resolve("summary.json")).isRegularFile();
        assertThat(Files.list(reports).toList()).hasSize(1); // no partial directory left behind
    }

    @Test
    void batchBecomesFinalAndEveryChangedValueIsLoggedOnce() throws Exception {
        RunResult first = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(first.keysFinalized()).isEqualTo(4);
        assertThat(first.corrections())
                .isEqualTo(
                        Map.of(Reason.STREAM_MISMATCH, 3L, Reason.MISSING_IN_STREAM, 5L, Reason.MISSING_IN_BATCH, 5L));

        try (Connection c = db.admin()) {
            assertThat(DefaultSet.VIEW.readRange(c, FROM.toEpochMilli(), TO.toEpochMilli()))
                    .containsExactly(
                            served(MISMATCH, MISMATCH_B), served(MATCH, MATCH_V), served(ONLY_BATCH, ONLY_BATCH_V));
            // Outside the range nothing was finalized.
            assertThat(DefaultSet.VIEW.find(c, NOT_IN_RANGE).orElseThrow().source())
                    .isEqualTo(WindowMetricsView.Source.STREAM);
            assertThat(DefaultSet.CORRECTIONS.find(c, ONLY_STREAM).orElseThrow().removed())
                    .isTrue();

            List<CorrectionLogTable.Entry> log = DefaultSet.LOG.readRun(c, first.runId());
            assertThat(log).hasSize(13);
            assertThat(log)
                    .filteredOn(e -> e.key().equals(MISMATCH))
                    .extracting(e -> e.metric() + ":" + e.before() + "->" + e.after() + ":"
                            + e.reason().wireName())
                    .containsExactlyInAnyOrder(
                            "clicks:2->3:stream_mismatch",
                            "spend_micros:1500000->1750000:stream_mismatch",
                            "events:12->13:stream_mismatch");
            assertThat(log)
                    .filteredOn(e -> e.key().equals(ONLY_BATCH))
                    .allSatisfy(e -> {
                        assertThat(e.before()).isNull();
                        assertThat(e.after()).isEqualTo(ONLY_BATCH_V.get(DefaultSet.SET.measureIndex(e.metric())));
                        assertThat(e.reason()).isEqualTo(Reason.MISSING_IN_STREAM);
                    })
                    .hasSize(5);
            assertThat(log)
                    .filteredOn(e -> e.key().equals(ONLY_STREAM))
                    .allSatisfy(e -> {
                        assertThat(e.before()).isEqualTo(ONLY_STREAM_V.get(DefaultSet.SET.measureIndex(e.metric())));
                        assertThat(e.after()).isNull();
                        assertThat(e.reason()).isEqualTo(Reason.MISSING_IN_BATCH);
                    })
                    .hasSize(5);
            assertThat(log).noneMatch(e -> e.key().equals(MATCH));
        }

        // The stream fires again for a finalized key (a higher revision): the served value does not move.
        db.stream(MISMATCH, m(11, 9, 9, 9_999_999, 29), 3);
        db.stream(ONLY_STREAM, m(4, 1, 0, 444_444, 5), 2);
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.VIEW.find(c, MISMATCH).orElseThrow()).isEqualTo(served(MISMATCH, MISMATCH_B));
            assertThat(DefaultSet.VIEW.find(c, ONLY_STREAM)).isEmpty();
        }

        // Reconciling again with no new batch data changes nothing and appends nothing.
        List<WindowCorrectionsTable.Row> before;
        String finalizedAtBefore;
        try (Connection c = db.admin()) {
            before = DefaultSet.CORRECTIONS.readRange(c, FROM.toEpochMilli(), TO.toEpochMilli());
            finalizedAtBefore = finalizedAt(c);
        }
        RunResult again = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(again.keysFinalized()).isZero();
        assertThat(again.valuesCorrected()).isZero();
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.CORRECTIONS.readRange(c, FROM.toEpochMilli(), TO.toEpochMilli()))
                    .isEqualTo(before);
            assertThat(finalizedAt(c)).isEqualTo(finalizedAtBefore);
            assertThat(DefaultSet.LOG.readRun(c, again.runId())).isEmpty();
            assertThat(ReconciliationRunsTable.find(c, again.runId())
                            .orElseThrow()
                            .valuesCorrected())
                    .isZero();
        }

        // A newer batch result for a finalized key: the change is applied and logged as batch_changed.
        db.batchRange(FROM, TO, batchRows(m(10, 4, 0, 1_750_000, 14)));
        RunResult third = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(third.keysFinalized()).isEqualTo(1);
        assertThat(third.corrections()).isEqualTo(Map.of(Reason.BATCH_CHANGED, 2L));
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.LOG.readRun(c, third.runId()))
                    .extracting(e -> e.metric() + ":" + e.before() + "->" + e.after())
                    .containsExactlyInAnyOrder("clicks:3->4", "events:13->14");
            assertThat(DefaultSet.VIEW.find(c, MISMATCH).orElseThrow().window().values())
                    .isEqualTo(m(10, 4, 0, 1_750_000, 14));
            assertThat(DefaultSet.LOG.readKey(c, MISMATCH)).hasSize(5);
        }
    }

    @Test
    void aRerunKeepsUnchangedWindowsAndCorrectsExactlyTheKeyWhoseBatchValueChanged() throws Exception {
        Scope range = ScopeResolver.range(FROM, TO);
        RunResult first = reconciler(DefaultSet.SETS).reconcile(range);
        RunResult again = reconciler(DefaultSet.SETS).reconcile(range);
        // Nothing changed: the rerun's diffs (copied from the first run) and totals are the first run's; it writes
        // nothing, and every window now names it as the run whose diffs hold.
        assertThat(again.set(DefaultSet.NAME).comparison())
                .isEqualTo(first.set(DefaultSet.NAME).comparison());
        assertThat(again.keysFinalized()).isZero();
        assertThat(again.corrections()).isEmpty();
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.DIFFS.readRun(c, again.runId()))
                    .hasSize(3)
                    .isEqualTo(DefaultSet.DIFFS.readRun(c, first.runId()));
            assertThat(count(
                            c,
                            "SELECT count(*) FROM reconciled_windows WHERE reconciliation_run_id = " + again.runId()))
                    .as("windows W0, W1, W2")
                    .isEqualTo(3);
            // One batch value changes behind the batch layer's back (no new batch run): its window's fingerprint moves.
            try (Statement st = c.createStatement()) {
                st.executeUpdate("UPDATE batch_window_metrics SET clicks = clicks + 1, events = events + 1"
                        + " WHERE campaign_id = 'camp-a' AND channel_id = 'web' AND window_start = '" + W0 + "'");
            }
        }

        RunResult third = reconciler(DefaultSet.SETS).reconcile(range);
        assertThat(third.keysFinalized()).isEqualTo(1);
        assertThat(third.corrections()).isEqualTo(Map.of(Reason.BATCH_CHANGED, 2L));
        assertThat(third.set(DefaultSet.NAME).comparison().range().counts()).isEqualTo(new KeyCounts(4, 0, 2, 1, 1, 4));
        MeasureValues matchNow = m(100, 6, 1, 2_000_000, 107);
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.LOG.readRun(c, third.runId()))
                    .extracting(e -> e.key() + " " + e.metric() + ":" + e.before() + "->" + e.after())
                    .containsExactlyInAnyOrder(MATCH + " clicks:5->6", MATCH + " events:106->107");
            assertThat(DefaultSet.VIEW.find(c, MATCH).orElseThrow()).isEqualTo(served(MATCH, matchNow));
            assertThat(DefaultSet.DIFFS.readRun(c, third.runId()))
                    .extracting(d -> d.key() + ":" + d.status())
                    .containsExactlyInAnyOrder(
                            MATCH + ":MISMATCH",
                            MISMATCH + ":MISMATCH",
                            ONLY_BATCH + ":MISSING_IN_STREAM",
                            ONLY_STREAM + ":MISSING_IN_BATCH");
            // A run that recorded nothing to compare with (every window key by key) finds exactly the same.
            try (Statement st = c.createStatement()) {
                st.executeUpdate("DELETE FROM reconciled_windows");
            }
        }
        RunResult full = reconciler(DefaultSet.SETS).reconcile(range);
        assertThat(full.set(DefaultSet.NAME).comparison())
                .isEqualTo(third.set(DefaultSet.NAME).comparison());
        assertThat(full.keysFinalized()).isZero();
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.DIFFS.readRun(c, full.runId())).isEqualTo(DefaultSet.DIFFS.readRun(c, third.runId()));
        }
    }

    @Test
    void aFinalizedValueEditedByHandIsPutBackByTheNextRun() throws Exception {
        Scope range = ScopeResolver.range(FROM, TO);
        reconciler(DefaultSet.SETS).reconcile(range);
        // A rerun with nothing new writes no statement to window_corrections, so the count of writes it records is
        // the one the next run finds (and that run may take the finalized side as recorded).
        long writes;
        try (Connection c = db.admin()) {
            writes = count(c, "SELECT count(*) FROM window_corrections_writes");
            assertThat(writes).as("the first run's insert").isPositive();
        }
        assertThat(reconciler(DefaultSet.SETS).reconcile(range).keysFinalized()).isZero();
        try (Connection c = db.admin();
                Statement st = c.createStatement()) {
            assertThat(count(c, "SELECT count(*) FROM window_corrections_writes"))
                    .isEqualTo(writes);
            assertThat(count(c, "SELECT count(*) FROM reconciled_windows WHERE final_writes = " + writes))
                    .isEqualTo(3);
            // The hand edit appends a write (the trigger): the next run reads the finalized side again.
            st.executeUpdate("UPDATE window_corrections SET impressions = 999"
                    + " WHERE campaign_id = 'camp-a' AND channel_id = 'web' AND window_start = '" + W0 + "'");
            assertThat(count(c, "SELECT count(*) FROM window_corrections_writes"))
                    .isEqualTo(writes + 1);
        }

        RunResult r = reconciler(DefaultSet.SETS).reconcile(range);
        assertThat(r.keysFinalized()).isEqualTo(1);
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.LOG.readRun(c, r.runId()))
                    .extracting(e -> e.key() + " " + e.metric() + ":" + e.before() + "->" + e.after() + ":"
                            + e.reason().wireName())
                    .containsExactly(MATCH + " impressions:999->100:batch_changed");
            assertThat(DefaultSet.VIEW.find(c, MATCH).orElseThrow()).isEqualTo(served(MATCH, MATCH_V));
        }
    }

    @Test
    void windowsRecordedWithAnEarlierRowHashAreReconciledOnceAndFindTheSame() throws Exception {
        Scope range = ScopeResolver.range(FROM, TO);
        RunResult first = reconciler(DefaultSet.SETS).reconcile(range);
        try (Connection c = db.admin();
                Statement st = c.createStatement()) {
            // As a database migrated from V15 has them: fingerprints of another function, no count of writes.
            st.executeUpdate("UPDATE reconciled_windows SET fingerprint_version = 1, final_writes = NULL");
        }

        RunResult again = reconciler(DefaultSet.SETS).reconcile(range);

        assertThat(again.set(DefaultSet.NAME).comparison())
                .isEqualTo(first.set(DefaultSet.NAME).comparison());
        assertThat(again.keysFinalized()).isZero();
        assertThat(again.corrections()).isEmpty();
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.DIFFS.readRun(c, again.runId()))
                    .isEqualTo(DefaultSet.DIFFS.readRun(c, first.runId()));
            assertThat(count(
                            c,
                            "SELECT count(*) FROM reconciled_windows WHERE fingerprint_version = "
                                    + ReconcileStatements.FINGERPRINT_VERSION + " AND final_writes IS NOT NULL"
                                    + " AND reconciliation_run_id = " + again.runId()))
                    .as("every window recorded again, by the run that reconciled it key by key")
                    .isEqualTo(3);
        }
        RunResult third = reconciler(DefaultSet.SETS).reconcile(range);
        assertThat(third.set(DefaultSet.NAME).comparison())
                .isEqualTo(first.set(DefaultSet.NAME).comparison());
        assertThat(third.keysFinalized()).isZero();
    }

    /** The Auckland days of FROM..TO (the 28th and the 29th there), in UTC: the first run's table of its own. */
    static final String NEW_PARTITION = "window_corrections_20261127t1100_20261129t1100";

    /**
     * What a run shows it is doing: a rerun that must read the windows' totals (something wrote one since) shows that
     * as a step of its own, most of its time; a rerun that nothing wrote a window of reads only the campaign-days.
     */
    @Test
    void aRerunShowsReadingTheWindowsTotalsAsAStepOfItsOwn() throws Exception {
        List<String> first = new ArrayList<>(), rerun = new ArrayList<>(), afterWrite = new ArrayList<>();
        reconciler(DefaultSet.SETS).withProgress(stages(first)).reconcile(ScopeResolver.range(FROM, TO));
        reconciler(DefaultSet.SETS).withProgress(stages(rerun)).reconcile(ScopeResolver.range(FROM, TO));
        db.stream(MATCH, MATCH_V, 3);
        reconciler(DefaultSet.SETS).withProgress(stages(afterWrite)).reconcile(ScopeResolver.range(FROM, TO));
        String survey = "reading each window's totals from stream and batch";
        String asRecorded = "reading the batch's totals per campaign-day (no window written since recorded)";
        assertThat(first)
                .as("a first run reads it beside its statement")
                .doesNotContain(survey, asRecorded)
                .contains("comparing stream and batch, correcting window_metrics");
        assertThat(rerun)
                .doesNotContain(survey)
                .containsSubsequence(
                        "checking that succeeded batch runs cover the range",
                        asRecorded,
                        "reconciling attribution",
                        "writing the report",
                        "committing");
        assertThat(afterWrite)
                .doesNotContain(asRecorded)
                .containsSubsequence(
                        "checking that succeeded batch runs cover the range",
                        survey,
                        "reconciling attribution",
                        "writing the report",
                        "committing");
    }

    /**
     * A rerun of a range that nothing wrote since its windows were recorded (V21's window_writes names none of them)
     * takes every window's totals as recorded instead of reading them, and finds, corrects and reports exactly what
     * reading them finds. The stream's committer logs the windows it writes, so its next firing of a key is seen.
     */
    @Test
    void aRerunThatNothingWroteTakesTheWindowsAsRecordedAndFindsWhatReadingThemFinds() throws Exception {
        Scope range = ScopeResolver.range(FROM, TO);
        RunResult first = reconciler(DefaultSet.SETS).reconcile(range);
        try (Connection c = db.admin()) {
            assertThat(count(
                            c,
                            "SELECT count(*) FROM window_writes WHERE window_start >= '" + FROM + "'"
                                    + " AND window_start < '" + TO + "'"))
                    .as("the first run forgot what it recorded")
                    .isZero();
            assertThat(count(c, "SELECT count(*) FROM window_writes"))
                    .as("the window outside the range is still named")
                    .isEqualTo(2);
        }
        RunResult asRecorded = reconciler(DefaultSet.SETS).reconcile(range);
        String recordedAsRecorded;
        try (Connection c = db.admin()) {
            recordedAsRecorded = recordedWindows(c);
            assertThat(recordedAsRecorded).contains("2026-11-28 10:58:00+00 2 ");
        }
        // The same windows read again: one row in window_writes is enough (here a write that changed nothing).
        try (Connection c = db.admin();
                Statement st = c.createStatement()) {
            st.executeUpdate("INSERT INTO window_writes (side, window_start) VALUES ('batch', '" + W2 + "')");
        }
        RunResult read = reconciler(DefaultSet.SETS).reconcile(range);

        assertThat(asRecorded.set(DefaultSet.NAME).comparison())
                .isEqualTo(first.set(DefaultSet.NAME).comparison())
                .isEqualTo(read.set(DefaultSet.NAME).comparison());
        assertThat(asRecorded.set(DefaultSet.NAME).finalTotals())
                .isEqualTo(read.set(DefaultSet.NAME).finalTotals());
        assertThat(asRecorded.keysFinalized()).isZero();
        assertThat(read.keysFinalized()).isZero();
        assertThat(Files.readString(asRecorded.reportDir().resolve(ReportWriter.CSV)))
                .isEqualTo(Files.readString(read.reportDir().resolve(ReportWriter.CSV)));
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.DIFFS.readRun(c, asRecorded.runId()))
                    .isEqualTo(DefaultSet.DIFFS.readRun(c, read.runId()));
            assertThat(recordedWindows(c))
                    .as("the windows read are recorded as they were when taken as recorded")
                    .isEqualTo(recordedAsRecorded);
        }

        // A dry run reads what was written but records nothing, so it forgets nothing either.
        db.stream(MISMATCH, MISMATCH_B, 3);
        RunResult dry = reconciler(DefaultSet.SETS).reconcile(range, Reconciler.Mode.DRY_RUN);
        assertThat(dry.set(DefaultSet.NAME).comparison().range().counts().mismatched())
                .isZero();
        try (Connection c = db.admin()) {
            assertThat(count(
                            c,
                            "SELECT count(*) FROM window_writes WHERE side = 'stream' AND window_start = '" + W0 + "'"))
                    .isEqualTo(1);
        }
        // The stream's next firing of a key now matches the batch: the next run sees it, nothing is corrected.
        RunResult after = reconciler(DefaultSet.SETS).reconcile(range);
        assertThat(after.set(DefaultSet.NAME).comparison().range().counts()).isEqualTo(new KeyCounts(4, 2, 0, 1, 1, 2));
        assertThat(after.keysFinalized()).isZero();
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.DIFFS.readRun(c, after.runId()))
                    .extracting(d -> d.key() + ":" + d.status())
                    .containsExactlyInAnyOrder(ONLY_BATCH + ":MISSING_IN_STREAM", ONLY_STREAM + ":MISSING_IN_BATCH");
        }
    }

    /** Everything reconciled_windows records of each window but the run and the time. */
    static String recordedWindows(Connection c) throws Exception {
        return text(
                c,
                "SELECT string_agg(concat_ws(' ', window_start, stream_keys, stream_fingerprint, batch_keys,"
                        + " batch_fingerprint, final_keys, final_fingerprint, final_writes, stream_min_window_end,"
                        + " stream_max_window_end, batch_min_window_end, batch_max_window_end, batch_impressions,"
                        + " batch_clicks, batch_conversions, batch_spend_micros, batch_events), E'\\n'"
                        + " ORDER BY window_start) FROM reconciled_windows");
    }

    private static RunProgress stages(List<String> names) {
        return new RunProgress() {
            @Override
            public void stage(String name) {
                names.add(name);
            }

            @Override
            public void rows(long done, long total) {}

            @Override
            public void close() {}
        };
    }

    @Test
    void aFirstRunFillsATableOfItsOwnThatNobodySeesBeforeTheRunCommits() throws Exception {
        Map<String, Long> midRun = new LinkedHashMap<>();
        RunProgress peek = new RunProgress() {
            @Override
            public void stage(String name) {
                if (!name.startsWith("writing the report")) return;
                // Filled, indexed and checked by now; another session still sees nothing of it.
                try (Connection c = db.admin()) {
                    midRun.put("corrections", count(c, "SELECT count(*) FROM window_corrections"));
                    midRun.put("final", count(c, "SELECT count(*) FROM window_metrics WHERE is_final"));
                    midRun.put("partitions", count(c, "SELECT count(*) FROM window_corrections_partitions"));
                    midRun.put(
                            "tables",
                            count(
                                    c,
                                    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = '"
                                            + NEW_PARTITION + "'"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public void rows(long done, long total) {}

            @Override
            public void close() {}
        };
        RunResult first = reconciler(DefaultSet.SETS).withProgress(peek).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(midRun)
                .containsExactly(
                        entry("corrections", 0L), entry("final", 0L), entry("partitions", 0L), entry("tables", 0L));
        assertThat(first.keysFinalized()).isEqualTo(4);
        try (Connection c = db.admin()) {
            try (Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT partition_name, lower(bounds), upper(bounds), attached"
                            + " FROM window_corrections_partitions")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo(NEW_PARTITION);
                assertThat(rs.getObject(2, java.time.OffsetDateTime.class).toInstant())
                        .isEqualTo(Instant.parse("2026-11-27T11:00:00Z"));
                assertThat(rs.getObject(3, java.time.OffsetDateTime.class).toInstant())
                        .isEqualTo(Instant.parse("2026-11-29T11:00:00Z"));
                assertThat(rs.getBoolean(4)).isTrue();
                assertThat(rs.next()).isFalse();
            }
            assertThat(count(c, "SELECT count(*) FROM " + NEW_PARTITION)).isEqualTo(4);
            assertThat(count(c, "SELECT count(*) FROM window_corrections_default"))
                    .isZero();
            assertThat(count(
                            c,
                            "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = '"
                                    + NEW_PARTITION + "'"))
                    .as("primary key and per-campaign index")
                    .isEqualTo(2);
            assertThat(DefaultSet.VIEW.find(c, MISMATCH).orElseThrow()).isEqualTo(served(MISMATCH, MISMATCH_B));
            assertThat(DefaultSet.VIEW.find(c, ONLY_STREAM)).isEmpty();
        }
        // Attached, it is written through window_corrections only; the functions refuse anything but a new table.
        try (Connection c = db.reconcilerPool().getConnection();
                Statement st = c.createStatement()) {
            assertThatThrownBy(() -> st.executeUpdate("DELETE FROM " + NEW_PARTITION))
                    .hasMessageContaining("permission denied");
            assertThatThrownBy(() ->
                            st.execute("SELECT window_corrections_attach_partition('window_corrections_default')"))
                    .hasMessageContaining("is no new partition");
            assertThatThrownBy(() -> st.execute("SELECT window_corrections_index_partition('" + NEW_PARTITION + "')"))
                    .hasMessageContaining("is no new partition");
            try (ResultSet rs = st.executeQuery(
                    "SELECT window_corrections_new_partition_of_batch('2026-11-28T12:00Z', '2026-12-02T00:00Z', 1,"
                            + " '2026-11-28T12:00Z', '2026-12-02T00:00Z', NULL)")) {
                rs.next();
                assertThat(rs.getString(1)).as("overlaps the run's table").isNull();
            }
        }
    }

    /**
     * The check reads a first run's new table whole (no range: a parallel scan), so it also requires every window the
     * table holds to be in the run's scope: a row outside it would be served once the table is attached.
     */
    @Test
    void theCheckRefusesANewTableHoldingAWindowOutsideTheRunsScope() throws Exception {
        Scope range = ScopeResolver.range(FROM, TO);
        try (Connection c = db.reconcilerPool().getConnection()) {
            c.setAutoCommit(false);
            NewPartition table =
                    NewPartition.create(c, DefaultSet.TABLES, range, ZONE, 1L).orElseThrow();
            ReconcileStatements sql = new ReconcileStatements(DefaultSet.TABLES);
            ScopeSurvey survey = ScopeSurvey.read(c, sql, range, ScopeDays.of(range, ZONE), Map.of(), 0);
            assertThat(FinalizedCheck.check(c, sql, range, 1L, survey, Optional.of(table)))
                    .as("as created: the batch's rows of the scope")
                    .containsOnlyKeys(W0.toEpochMilli(), W1.toEpochMilli());
            try (Statement st = c.createStatement()) {
                // Within the table's days (and its range's CHECK), outside the run's scope.
                st.executeUpdate("INSERT INTO " + table.name() + " (" + DefaultSet.CORRECTIONS.insertColumns()
                        + ") VALUES ('" + OUTSIDE + "', '" + OUTSIDE.plusSeconds(60)
                        + "', 'camp-x', 'web', 1, 0, 0, 1, 1, false, 1, NULL)");
            }
            assertThatThrownBy(() -> FinalizedCheck.check(c, sql, range, 1L, survey, Optional.of(table)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("holds window " + OUTSIDE + ", outside");
            c.rollback();
        }
    }

    @Test
    void aFirstRunThatFailsLeavesNoTableBehind() throws Exception {
        Scope range = ScopeResolver.range(FROM, TO);
        // The report is written after the table was filled, indexed and checked, before it is attached.
        Path notADirectory = Files.writeString(reports.resolve("not-a-directory"), "x");
        Reconciler failing = new Reconciler(
                db.reconcilerPool(), new Reconciler.Settings(ZONE, DefaultSet.SETS, notADirectory), CLOCK);
        assertThatThrownBy(() -> failing.reconcile(range)).isInstanceOf(IOException.class);
        try (Connection c = db.admin()) {
            assertThat(count(c, "SELECT count(*) FROM window_corrections")).isZero();
            assertNoNewPartition(c);
            assertThat(count(c, "SELECT count(*) FROM correction_log")).isZero();
        }
        RunResult again = reconciler(DefaultSet.SETS).reconcile(range);
        assertThat(again.keysFinalized()).isEqualTo(4);
        try (Connection c = db.admin()) {
            assertThat(count(c, "SELECT count(*) FROM " + NEW_PARTITION)).isEqualTo(4);
        }
    }

    @Test
    void aFirstRunThatWouldWaitToAttachItsTableMovesTheRowsIntoWindowCorrectionsInstead() throws Exception {
        Scope range = ScopeResolver.range(FROM, TO);
        RunResult first;
        try (Connection reader = db.admin()) {
            // A long query of window_metrics holds window_corrections_default until it ends: attaching would wait,
            // and every reader arriving meanwhile would queue behind it.
            reader.setAutoCommit(false);
            assertThat(count(reader, "SELECT count(*) FROM window_metrics")).isEqualTo(5);
            first = reconciler(DefaultSet.SETS).reconcile(range);
            reader.commit();
        }
        assertThat(first.keysFinalized()).isEqualTo(4);
        try (Connection c = db.admin()) {
            assertThat(count(c, "SELECT count(*) FROM window_corrections_partitions"))
                    .isZero();
            assertThat(count(
                            c,
                            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = '"
                                    + NEW_PARTITION + "'"))
                    .isZero();
            assertThat(count(c, "SELECT count(*) FROM window_corrections_default"))
                    .isEqualTo(4);
            assertThat(DefaultSet.VIEW.find(c, MISMATCH).orElseThrow()).isEqualTo(served(MISMATCH, MISMATCH_B));
            assertThat(DefaultSet.VIEW.find(c, ONLY_STREAM)).isEmpty();
        }
        RunResult again = reconciler(DefaultSet.SETS).reconcile(range);
        assertThat(again.keysFinalized()).isZero();
        assertThat(again.set(DefaultSet.NAME).comparison())
                .isEqualTo(first.set(DefaultSet.NAME).comparison());
    }

    @Test
    void aRangeReachingIntoADayWithATableAlreadyIsFinalizedThroughWindowCorrections() throws Exception {
        // W0 and W1 are the 28th in Auckland: that day gets its table. W2 (the 29th) is not reconciled yet.
        reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(W0, W2));
        RunResult whole = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(whole.keysFinalized()).as("ONLY_STREAM, in W2").isEqualTo(1);
        try (Connection c = db.admin()) {
            assertThat(count(c, "SELECT count(*) FROM window_corrections_partitions"))
                    .isEqualTo(1);
            assertThat(count(c, "SELECT count(*) FROM window_corrections_20261127t1100_20261128t1100"))
                    .isEqualTo(3);
            assertThat(count(c, "SELECT count(*) FROM window_corrections_default WHERE removed"))
                    .isEqualTo(1);
            assertThat(DefaultSet.VIEW.find(c, ONLY_STREAM)).isEmpty();
            assertThat(DefaultSet.VIEW.find(c, ONLY_BATCH).orElseThrow()).isEqualTo(served(ONLY_BATCH, ONLY_BATCH_V));
        }
    }

    @Test
    void aTableOfItsOwnServesWhatInsertingIntoWindowCorrectionsServes() throws Exception {
        // The same data in a second schema whose days already have an (empty, indexed) partition: its runs insert
        // through window_corrections, as before V19. After a first run, a rerun, and a re-backfill with one changed
        // value and one dropped key and its run, both serve, finalize and log the same.
        try (ReconcileDb indexed = ReconcileDb.fresh("reconciler-indexed")) {
            fill(indexed);
            try (Connection c = indexed.admin();
                    Statement st = c.createStatement()) {
                // No window start is in '{}': the table is created empty.
                st.execute("SELECT window_corrections_index_partition(window_corrections_new_partition_of_batch("
                        + "'2026-11-27T11:00Z', '2026-11-29T11:00Z', 1, '2026-11-27T11:00Z', '2026-11-29T11:00Z',"
                        + " '{}'))");
                st.execute("SELECT window_corrections_attach_partition('" + NEW_PARTITION + "')");
            }
            Reconciler other = new Reconciler(
                    indexed.reconcilerPool(),
                    new Reconciler.Settings(ZONE, DefaultSet.SETS, reports.resolve("indexed")),
                    CLOCK);
            Scope range = ScopeResolver.range(FROM, TO);
            Map<WindowKey, MeasureValues> rebackfill = new LinkedHashMap<>(batchRows(MISMATCH_B));
            rebackfill.put(MATCH, m(100, 6, 1, 2_000_000, 107));
            rebackfill.remove(ONLY_BATCH);
            for (int step = 0; step < 3; step++) {
                if (step == 2) {
                    db.batchRange(FROM, TO, rebackfill);
                    indexed.batchRange(FROM, TO, rebackfill);
                }
                RunResult a = reconciler(DefaultSet.SETS).reconcile(range);
                RunResult b = other.reconcile(range);
                assertThat(a.keysFinalized()).as("step %d", step).isEqualTo(b.keysFinalized());
                assertThat(a.corrections()).as("step %d", step).isEqualTo(b.corrections());
                try (Connection ca = db.admin();
                        Connection cb = indexed.admin()) {
                    for (String q : SERVED)
                        assertThat(text(ca, q)).as("step %d: %s", step, q).isEqualTo(text(cb, q));
                    assertThat(count(cb, "SELECT count(*) FROM window_corrections_default"))
                            .isZero();
                }
            }
        }
    }

    @Test
    void aFirstRunReadsItsSurveyBesideItsStatementAndFindsWhatReadingItFirstFinds() throws Exception {
        // The same data in a second schema reconciled through a pool of one connection: no second connection for the
        // survey, so it is read first, on the run's own. First run, rerun, re-backfill and its run: the same results,
        // served rows, log and report.
        try (ReconcileDb alone = ReconcileDb.fresh("reconciler-alone");
                HikariDataSource oneConnection = alone.newReconcilerPool(1)) {
            fill(alone);
            Reconciler sequential = new Reconciler(
                    oneConnection, new Reconciler.Settings(ZONE, DefaultSet.SETS, reports.resolve("alone")), CLOCK);
            Scope range = ScopeResolver.range(FROM, TO);
            Map<WindowKey, MeasureValues> rebackfill = new LinkedHashMap<>(batchRows(MISMATCH_B));
            rebackfill.put(MATCH, m(100, 6, 1, 2_000_000, 107));
            for (int step = 0; step < 3; step++) {
                if (step == 2) {
                    db.batchRange(FROM, TO, rebackfill);
                    alone.batchRange(FROM, TO, rebackfill);
                }
                RunResult beside = reconciler(DefaultSet.SETS).reconcile(range);
                if (step == 0) {
                    assertThat(db.reconcilerPool().getHikariPoolMXBean().getTotalConnections())
                            .as("the survey's connection besides the run's")
                            .isEqualTo(2);
                }
                RunResult first = sequential.reconcile(range);
                assertThat(beside.keysFinalized()).as("step %d", step).isEqualTo(first.keysFinalized());
                assertThat(beside.corrections()).as("step %d", step).isEqualTo(first.corrections());
                assertThat(beside.set(DefaultSet.NAME).comparison())
                        .as("step %d", step)
                        .isEqualTo(first.set(DefaultSet.NAME).comparison());
                assertThat(Files.readString(beside.reportDir().resolve(ReportWriter.CSV)))
                        .as("step %d", step)
                        .isEqualTo(Files.readString(first.reportDir().resolve(ReportWriter.CSV)));
                try (Connection ca = db.admin();
                        Connection cb = alone.admin()) {
                    for (String q : SERVED)
                        assertThat(text(ca, q)).as("step %d: %s", step, q).isEqualTo(text(cb, q));
                    assertThat(count(ca, "SELECT count(*) FROM " + NEW_PARTITION))
                            .isEqualTo(count(cb, "SELECT count(*) FROM " + NEW_PARTITION))
                            .isEqualTo(4);
                }
            }
            assertThat(oneConnection.getHikariPoolMXBean().getTotalConnections())
                    .isEqualTo(1);
        }
    }

    @Test
    void aFirstRunWhosePoolHasNoConnectionToSpareReadsItsSurveyFirst() throws Exception {
        // The pool holds two connections and something else in the process has one: the run takes the other and
        // does not wait for a second (the pool's 30 s connection timeout, then a failed run).
        RunResult first;
        try (Connection busy = db.reconcilerPool().getConnection()) {
            first = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
            assertThat(busy.isValid(1)).isTrue();
        }
        assertThat(first.keysFinalized()).isEqualTo(4);
        assertThat(first.timings().total()).isLessThan(java.time.Duration.ofSeconds(20));
        try (Connection c = db.admin()) {
            assertThat(count(c, "SELECT count(*) FROM " + NEW_PARTITION)).isEqualTo(4);
            assertThat(DefaultSet.VIEW.find(c, MISMATCH).orElseThrow()).isEqualTo(served(MISMATCH, MISMATCH_B));
        }
    }

    @Test
    void aFirstRunWhoseTemporaryDirectoryCannotHoldItsDiffsCorrectsOnItsOwnConnection() throws Exception {
        // A host whose java.io.tmpdir is missing (or full, or read-only): the diffs cannot go through a file, so the
        // run does not join beside; it does all of it on its own connection, and the nightly still reconciles.
        String tmpdir = System.getProperty("java.io.tmpdir");
        RunResult first;
        System.setProperty(
                "java.io.tmpdir", reports.resolve("no-such-directory").toString());
        try {
            first = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        } finally {
            System.setProperty("java.io.tmpdir", tmpdir);
        }
        assertThat(first.keysFinalized()).isEqualTo(4);
        assertThat(db.reconcilerPool().getHikariPoolMXBean().getTotalConnections())
                .as("no second connection: nothing to read beside")
                .isEqualTo(1);
        try (Connection c = db.admin()) {
            assertThat(count(c, "SELECT count(*) FROM " + NEW_PARTITION)).isEqualTo(4);
            assertThat(DefaultSet.VIEW.find(c, MISMATCH).orElseThrow()).isEqualTo(served(MISMATCH, MISMATCH_B));
        }
    }

    @Test
    void aFirstRunOverARangeWithoutRowsLeavesNoTableForIt() throws Exception {
        Instant from = OUTSIDE.plus(java.time.Duration.ofDays(3));
        Instant to = from.plusSeconds(600);
        db.batchRange(from, to, Map.of());
        RunResult run = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(from, to));
        assertThat(run.keysFinalized()).isZero();
        assertThat(run.set(DefaultSet.NAME).comparison().range().counts().compared())
                .isZero();
        try (Connection c = db.admin()) {
            assertNoNewPartition(c);
        }
    }

    /** No table of a first run's own is registered or left in the schema. */
    static void assertNoNewPartition(Connection c) throws Exception {
        assertThat(count(c, "SELECT count(*) FROM window_corrections_partitions"))
                .isZero();
        assertThat(count(
                        c,
                        "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
                                + " AND tablename LIKE 'window\\_corrections\\_2%'"))
                .isZero();
    }

    /** What is served, finalized and logged, without the times of the runs. */
    static final List<String> SERVED = List.of(
            "SELECT string_agg(concat_ws(' ', window_start, window_end, campaign_id, channel_id, impressions, clicks,"
                    + " conversions, spend_micros, events, source, is_final), E'\\n' ORDER BY window_start,"
                    + " campaign_id, channel_id) FROM window_metrics",
            "SELECT string_agg(concat_ws(' ', window_start, window_end, campaign_id, channel_id, impressions, clicks,"
                    + " conversions, spend_micros, events, removed, reconciliation_run_id, batch_run_id), E'\\n'"
                    + " ORDER BY window_start, campaign_id, channel_id) FROM window_corrections",
            "SELECT string_agg(concat_ws(' ', reconciliation_run_id, window_start, campaign_id, channel_id, metric,"
                    + " before_value, after_value, reason), E'\\n' ORDER BY log_id) FROM correction_log");

    static String text(Connection c, String sql) throws Exception {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    static long count(Connection c, String sql) throws Exception {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aDryRunReportsWhatItWouldCorrectAndChangesNothingServed() throws Exception {
        ServedState before = servedState();
        RunResult dry = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO), Reconciler.Mode.DRY_RUN);

        assertThat(dry.dryRun()).isTrue();
        assertThat(servedState())
                .as("window_metrics, window_corrections and correction_log unchanged")
                .isEqualTo(before);
        assertThat(dry.set(DefaultSet.NAME).comparison().range().counts()).isEqualTo(new KeyCounts(4, 1, 1, 1, 1, 3));
        assertThat(dry.set(DefaultSet.NAME).finalTotals())
                .as("what would be served")
                .isEqualTo(dry.set(DefaultSet.NAME).comparison().range().batch());
        try (Connection c = db.admin()) {
            ReconciliationRunsTable.Run run =
                    ReconciliationRunsTable.find(c, dry.runId()).orElseThrow();
            assertThat(run.dryRun()).isTrue();
            assertThat(run.status()).isEqualTo(ReconciliationRunsTable.Status.SUCCEEDED);
            assertThat(run.valuesCorrected()).isEqualTo(13);
            assertThat(DefaultSet.DIFFS.readRun(c, dry.runId())).hasSize(3);
        }
        assertThat(Files.readString(dry.reportDir().resolve("summary.json"))).contains("\"dry_run\" : true");
        assertThat(Files.readString(dry.reportDir().resolve("report.html")))
                .contains("Dry run: nothing was applied")
                .contains("Corrections this run would apply");

        // Applied, the same run does exactly what the dry run said it would.
        RunResult applied = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(applied.dryRun()).isFalse();
        assertThat(applied.keysFinalized()).isEqualTo(dry.keysFinalized()).isEqualTo(4);
        assertThat(applied.corrections()).isEqualTo(dry.corrections());
        assertThat(servedState()).isNotEqualTo(before);

        // After it, a dry run would change nothing.
        ServedState after = servedState();
        RunResult again = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO), Reconciler.Mode.DRY_RUN);
        assertThat(again.keysFinalized()).isZero();
        assertThat(again.valuesCorrected()).isZero();
        assertThat(servedState()).isEqualTo(after);
    }

    @Test
    void anAppliedRunRecordsItsTimeZoneForTheRollupsAndADryRunDoesNot() throws Exception {
        reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO), Reconciler.Mode.DRY_RUN);
        assertThat(recordedTimeZone()).as("a dry run serves nothing new").isEqualTo("UTC");

        reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(recordedTimeZone()).isEqualTo("Pacific/Auckland");
        // The read side now cuts days where the run did: every served key of the range (the one at W2, the 29th in
        // Auckland, is hidden now) is on the 28th there, which began at 11:00Z the day before. And the run's range
        // counts as reconciled: the 5 minutes before W0 + 5 min are covered and every row in them is final.
        try (Connection c = db.reconcilerPool().getConnection();
                Statement st = c.createStatement()) {
            try (ResultSet rs =
                    st.executeQuery("SELECT DISTINCT period_start FROM daily_metrics('2026-11-27', '2026-11-29')")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getObject(1, java.time.OffsetDateTime.class).toInstant())
                        .isEqualTo(Instant.parse("2026-11-27T11:00:00Z"));
                assertThat(rs.next()).isFalse();
            }
            try (ResultSet rs = st.executeQuery("SELECT is_final FROM sliding_metrics(5, '" + W0 + "', '" + TO + "')"
                    + " WHERE campaign_id = 'camp-a' AND channel_id = 'web' AND window_end = '" + W0.plusSeconds(300)
                    + "'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getBoolean(1)).isTrue();
            }
        }
    }

    @Test
    void theReportShowsStreamVsFinalCtrAndTheLargestCtrDifferences() throws Exception {
        RunResult r = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));

        // Stream: (5 + 2 + 1) clicks / (100 + 10 + 3) impressions; final (batch): (5 + 3 + 0) / (100 + 10 + 7).
        com.fasterxml.jackson.databind.JsonNode ctr = new com.fasterxml.jackson.databind.ObjectMapper()
                .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .readTree(r.reportDir().resolve("summary.json").toFile())
                .get("ctr");
        assertThat(ctr.get("stream").decimalValue()).isEqualTo(new BigDecimal("0.070796460177"));
        assertThat(ctr.get("final").decimalValue()).isEqualTo(new BigDecimal("0.068376068376"));
        assertThat(ctr.get("final_minus_stream").decimalValue()).isEqualTo(new BigDecimal("-0.002420391801"));
        // Only the mismatched key has a CTR on both sides that differs: 2/10 in the stream, 3/10 final.
        assertThat(ctr.get("largest_differences")).hasSize(1);
        com.fasterxml.jackson.databind.JsonNode k =
                ctr.get("largest_differences").get(0);
        assertThat(k.get("campaign_id").asText() + "/" + k.get("channel_id").asText())
                .isEqualTo("camp-a/app");
        assertThat(k.get("stream_ctr").decimalValue()).isEqualByComparingTo("0.2");
        assertThat(k.get("final_ctr").decimalValue()).isEqualByComparingTo("0.3");
        // Written with all 12 decimals (the tree above drops trailing zeros when it reads them).
        assertThat(Files.readString(r.reportDir().resolve("summary.json")))
                .contains("\"stream_ctr\" : 0.200000000000", "\"final_ctr\" : 0.300000000000");
        assertThat(Files.readString(r.reportDir().resolve("report.html")))
                .contains("Click-through rate (CTR)")
                .contains("7.0796460177 %")
                .contains("6.8376068376 %")
                .contains("-0.2420391801 pp")
                .contains("20.0000000000 %")
                .contains("30.0000000000 %")
                .contains("+10.0000000000 pp");
        // The served CTR of the range (the ratio of the served sums) is the report's final CTR.
        try (Connection c = db.reconcilerPool().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT ctr(sum(clicks), sum(impressions)) FROM window_metrics"
                        + " WHERE window_start >= '" + FROM + "' AND window_start < '" + TO + "'")) {
            rs.next();
            assertThat(rs.getBigDecimal(1)).isEqualTo(ctr.get("final").decimalValue());
        }
    }

    String recordedTimeZone() throws Exception {
        try (Connection c = db.admin()) {
            return dev.recount.db.tables.ServingSettingsTable.timeZone(c);
        }
    }

    @Test
    void spendBeyondALongIsComparedFinalizedAndLoggedExactly() throws Exception {
        WindowKey big = key(W1, "camp-big", "web");
        BigInteger streamSpend = new BigInteger("18446744073709551621"); // 2^64 + 5
        BigInteger batchSpend = new BigInteger("30000000000000000007");
        MeasureValues bigStream =
                new MeasureValues(BigInteger.ZERO, BigInteger.ZERO, BigInteger.TWO, streamSpend, BigInteger.TWO);
        MeasureValues bigBatch =
                new MeasureValues(BigInteger.ZERO, BigInteger.ZERO, BigInteger.TWO, batchSpend, BigInteger.TWO);
        db.stream(big, bigStream, 1);
        Map<WindowKey, MeasureValues> batch = batchRows(MISMATCH_B);
        batch.put(big, bigBatch);
        db.batchRange(FROM, TO, batch);
        // |stream - batch| / batch = 11553255926290448386 / 30000000000000000007 = 0.3851...
        RunResult r = reconciler(DefaultSet.with("reconcile.tolerance.spend_micros.relative=0.4"))
                .reconcile(ScopeResolver.range(FROM, TO));

        assertThat(r.set(DefaultSet.NAME).comparison().range().stream())
                .isEqualTo(MATCH_V.plus(MISMATCH_S).plus(ONLY_STREAM_V).plus(bigStream));
        assertThat(r.set(DefaultSet.NAME).comparison().range().batch())
                .isEqualTo(MATCH_V.plus(MISMATCH_B).plus(ONLY_BATCH_V).plus(bigBatch));
        assertThat(r.set(DefaultSet.NAME).finalTotals().get(DefaultSet.SPEND))
                .isEqualTo(batchSpend.add(BigInteger.valueOf(2_000_000 + 1_750_000 + 70_000)));
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.DIFFS.readRun(c, r.runId()))
                    .filteredOn(d -> d.key().equals(big))
                    .containsExactly(new ReconciliationDiffsTable.Row(
                            big, W2.toEpochMilli(), Status.MISMATCH, true, 1, bigStream, bigBatch));
            assertThat(DefaultSet.VIEW.find(c, big).orElseThrow()).isEqualTo(served(big, bigBatch));
            assertThat(DefaultSet.LOG.readKey(c, big))
                    .extracting(e -> e.metric() + ":" + e.before() + "->" + e.after() + ":"
                            + e.reason().wireName())
                    .containsExactly("spend_micros:18446744073709551621->30000000000000000007:stream_mismatch");
            assertThat(ReconciliationRunsTable.find(c, r.runId()).orElseThrow().totalsJson())
                    .contains("\"spend_micros\": 30000000000003820007");
        }
        assertThat(Files.readString(r.reportDir().resolve("summary.json")))
                .contains("\"spend_micros\" : 30000000000003820007", "\"final\" : \"30000000000003.820007\"");
        assertThat(Files.readString(r.reportDir().resolve("diffs.csv")))
                .contains(",18446744073709551621,30000000000000000007,-11553255926290448386,-0.385109,")
                .contains(",18446744073709.551621,30000000000000.000007,-11553255926290.448386");
        assertThat(Files.readString(r.reportDir().resolve("report.html"))).contains("30,000,000,000,003.820007");

        // Relative tolerance is exact numeric on values beyond a long too; nothing is logged twice.
        RunResult stricter = reconciler(DefaultSet.with("reconcile.tolerance.spend_micros.relative=0.385"))
                .reconcile(ScopeResolver.range(FROM, TO));
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.DIFFS.readRun(c, stricter.runId()))
                    .filteredOn(d -> d.key().equals(big))
                    .extracting(ReconciliationDiffsTable.Row::withinTolerance)
                    .containsExactly(false);
            assertThat(DefaultSet.LOG.readRun(c, stricter.runId())).isEmpty();
        }
    }

    @Test
    void keyDroppedByALaterBatchIsHiddenAndLogged() throws Exception {
        reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        Map<WindowKey, MeasureValues> shrunk = batchRows(MISMATCH_B);
        shrunk.remove(ONLY_BATCH); // e.g. its events turned out invalid: neither side has the key any more
        db.batchRange(FROM, TO, shrunk);

        RunResult r = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(r.corrections()).isEqualTo(Map.of(Reason.BATCH_CHANGED, 5L));
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.VIEW.find(c, ONLY_BATCH)).isEmpty();
            assertThat(DefaultSet.LOG.readRun(c, r.runId()))
                    .allSatisfy(e -> assertThat(e.after()).isNull());
        }
    }

    @Test
    void verdictFollowsTolerances() throws Exception {
        // The mismatch differs by 1 click, 1 event and 250000 micros of 1750000 (14.29 %); a missing key by all it has.
        String[] loose = {
            "reconcile.tolerance.impressions.absolute=7",
            "reconcile.tolerance.clicks.absolute=1",
            "reconcile.tolerance.events.absolute=7",
            "reconcile.tolerance.spend_micros.relative=0.143",
            "reconcile.tolerance.spend_micros.absolute=333333"
        };
        RunResult within = reconciler(DefaultSet.with(loose)).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(within.set(DefaultSet.NAME).comparison().range().counts().beyondTolerance())
                .isZero();
        assertThat(within.verdict()).isEqualTo(ReconciliationRunsTable.Verdict.WITHIN_TOLERANCE);

        // Absolute 200000 no longer covers the stream-only key's 333333; the mismatch's 250000 is still within
        // relatively (250000 <= 0.143 * 1750000 = 250250).
        loose[4] = "reconcile.tolerance.spend_micros.absolute=200000";
        RunResult one = reconciler(DefaultSet.with(loose)).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(one.set(DefaultSet.NAME).comparison().range().counts().beyondTolerance())
                .isEqualTo(1);
        assertThat(one.verdict()).isEqualTo(ReconciliationRunsTable.Verdict.BEYOND_TOLERANCE);

        loose[3] = "reconcile.tolerance.spend_micros.relative=0.142";
        RunResult two = reconciler(DefaultSet.with(loose)).reconcile(ScopeResolver.range(FROM, TO));
        assertThat(two.set(DefaultSet.NAME).comparison().range().counts().beyondTolerance())
                .isEqualTo(2);
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.DIFFS.readRun(c, two.runId()))
                    .extracting(d -> d.key().dimension(0) + "/" + d.key().dimension(1) + ":" + d.withinTolerance())
                    .containsExactly("camp-a/app:false", "camp-b/web:true", "camp-b/app:false");
        }
    }

    @Test
    void refusesARangeTheBatchHasNotFullyCovered() throws Exception {
        Instant later = TO.plusSeconds(7200);
        assertThatThrownBy(() -> reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, later)))
                .isInstanceOf(NotCoveredException.class)
                .hasMessageContaining("no succeeded batch run covers")
                .hasMessageContaining("[2026-11-28T11:08:00Z, ");
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.CORRECTIONS.readRange(c, FROM.toEpochMilli(), later.toEpochMilli()))
                    .isEmpty();
            try (Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery(
                            "SELECT status, error FROM reconciliation_runs ORDER BY run_id DESC LIMIT 1")) {
                rs.next();
                assertThat(rs.getString("status")).isEqualTo("failed");
                assertThat(rs.getString("error")).contains("no succeeded batch run covers");
            }
        }
        assertThat(Files.list(reports).toList()).isEmpty();

        // Two adjacent succeeded runs together cover the range.
        db.batchRange(TO, OUTSIDE, Map.of());
        RunResult r = reconciler(DefaultSet.SETS).reconcile(ScopeResolver.range(FROM, OUTSIDE.plusSeconds(60)));
        assertThat(r.set(DefaultSet.NAME).comparison().range().counts().compared())
                .isEqualTo(5);
    }

    @Test
    void reconcilesTheWindowsOfAnAffectedBatchRun() throws Exception {
        // The run recomputes W1 exactly as the range run left it, so it changes no row (each keeps the range run's
        // id): its windows come from what it recorded, not from the rows.
        long affected = db.batchAffected(Map.of(ONLY_BATCH, ONLY_BATCH_V));
        Scope scope;
        try (Connection c = db.reconcilerPool().getConnection()) {
            assertThat(BatchRunsTable.find(c, affected).orElseThrow().windowsWritten())
                    .isZero();
            scope = ScopeResolver.batchRun(c, affected);
        }
        assertThat(scope.sets())
                .as("a run from before metric sets: the default set's")
                .containsExactly("default");
        assertThat(scope.of("default").windowStarts()).containsExactly(W1.toEpochMilli());
        RunResult r = reconciler(DefaultSet.SETS).reconcile(scope);
        assertThat(r.set(DefaultSet.NAME).comparison().range().counts()).isEqualTo(new KeyCounts(1, 0, 0, 1, 0, 1));
        try (Connection c = db.admin()) {
            assertThat(DefaultSet.VIEW.find(c, ONLY_BATCH).orElseThrow().isFinal())
                    .isTrue();
            assertThat(DefaultSet.VIEW.find(c, MISMATCH).orElseThrow().isFinal())
                    .isFalse();
            assertThat(ReconciliationRunsTable.find(c, r.runId()).orElseThrow().batchRunId())
                    .isEqualTo(affected);
        }
    }

    ServedState servedState() throws Exception {
        try (Connection c = db.admin()) {
            return ServedState.read(c);
        }
    }

    static WindowMetricsView.Row served(WindowKey key, MeasureValues v) {
        return new WindowMetricsView.Row(
                new dev.recount.db.tables.WindowRow(key, key.windowStartMillis() + 60_000, v),
                WindowMetricsView.Source.BATCH,
                true);
    }

    static String finalizedAt(Connection c) throws Exception {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT string_agg(finalized_at::text || reconciliation_run_id, ',' ORDER BY campaign_id, channel_id) FROM window_corrections")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
