package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.TestSets;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import java.math.BigInteger;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code backfill range} end to end: Parquet written in the lake's layout, a local SparkSession, the real
 * PostgreSQL schema. Expectations are computed by hand from the fixture below.
 */
class RangeBackfillITCase {
    private static final long MINUTE = 60_000;
    private static final Instant W0 = Instant.parse("2026-11-28T10:00:00Z");
    private static final long W = W0.toEpochMilli();
    private static final String FROM = "2026-11-28T10:00:00Z";
    private static final String TO = "2026-11-28T10:02:00Z";

    /** Just before the range: the last millisecond of window 09:59. */
    static final LakeEvent BEFORE = LakeEvent.of("before", "impression", W - 1, "c1", "ch1", 7, 100);

    static final LakeEvent FIRST_MILLI = LakeEvent.of("first", "impression", W, "c1", "ch1", 100, 101);
    static final LakeEvent LAST_MILLI = LakeEvent.of("last", "click", W + MINUTE - 1, "c1", "ch1", 250, 102);
    /** Two copies with different payloads: the lower offset (cost 111) is the one counted. */
    static final LakeEvent COPY_HIGH = LakeEvent.of("dup", "impression", W + 1_000, "c1", "ch1", 999, 110);

    static final LakeEvent COPY_LOW = LakeEvent.of("dup", "impression", W + 1_000, "c1", "ch1", 111, 107);
    /** Arrived an hour after its window closed: too late for the stream, still counted by the batch. */
    static final LakeEvent TOO_LATE =
            LakeEvent.of("late", "click", W + 10_000, "c1", "ch1", 40, 300).receivedAfter(3_600_000);

    static final LakeEvent OTHER_CAMPAIGN = LakeEvent.of("c2-imp", "impression", W + 30_000, "c2", "ch1", 0, 103);
    static final LakeEvent OTHER_CHANNEL = LakeEvent.of("ch2-conv", "conversion", W + 30_000, "c1", "ch2", 3_000, 104);
    static final LakeEvent NEXT_WINDOW = LakeEvent.of("next", "conversion", W + MINUTE, "c1", "ch1", 5_000, 105);
    /** The first millisecond after the range. */
    static final LakeEvent AFTER = LakeEvent.of("after", "click", W + 2 * MINUTE, "c1", "ch1", 1, 106);

    static final List<WindowRow> EXPECTED = List.of(
            row(W, "c1", "ch1", MeasureValues.of(2, 2, 0, 100 + 250 + 111 + 40, 4)),
            row(W, "c1", "ch2", MeasureValues.of(0, 0, 1, 3_000, 1)),
            row(W, "c2", "ch1", MeasureValues.of(1, 0, 0, 0, 1)),
            row(W + MINUTE, "c1", "ch1", MeasureValues.of(0, 0, 1, 5_000, 1)));
    static final WindowRow BEFORE_ROW = row(W - MINUTE, "c1", "ch1", MeasureValues.of(1, 0, 0, 7, 1));

    @TempDir
    Path dir;

    BatchStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        t.lakeCompleteUntil(Instant.parse("2026-11-28T11:00:00Z"));
    }

    private void writeFixture() {
        t.lake.write(
                List.of(BEFORE, FIRST_MILLI, LAST_MILLI, COPY_HIGH, OTHER_CAMPAIGN, OTHER_CHANNEL, NEXT_WINDOW, AFTER));
        // The other copies arrive in later files (and another Kafka partition), as replays do.
        t.lake.write(List.of(LAST_MILLI.copyAt("ad-events", 1, 0), COPY_LOW));
        t.lake.write(List.of(TOO_LATE));
    }

    @Test
    void recomputesExactTotalsAndRerunningTheRangeGivesIdenticalRows() throws Exception {
        writeFixture();
        assertThat(t.backfill("range", "--from", "2026-11-28T09:00:00Z", "--to", FROM))
                .isZero();
        long earlierRun = t.lastRun().runId();

        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        assertThat(t.lastOut.strip())
                .matches(java.util.regex.Pattern.quote("run " + (earlierRun + 1) + " (range [" + FROM + ", " + TO
                                + ")): 7 events (9 lake rows), 4 window rows written, 0 unchanged, 0 deleted, ")
                        + "\\d+\\.\\d s");
        List<WindowRow> rows = t.batchRows();
        assertThat(rows).containsExactly(concat(BEFORE_ROW, EXPECTED));
        BatchRunsTable.Run run = t.lastRun();
        assertThat(run.mode()).isEqualTo(BatchRunsTable.Mode.RANGE);
        assertThat(run.status()).isEqualTo(BatchRunsTable.Status.SUCCEEDED);
        assertThat(run.rangeFrom()).isEqualTo(W);
        assertThat(run.rangeTo()).isEqualTo(W + 2 * MINUTE);
        assertThat(run.forced()).isFalse();
        assertThat(run.eventsRead()).isEqualTo(7);
        assertThat(run.windowsWritten()).isEqualTo(4);
        assertThat(run.windowsDeleted()).isZero();
        assertThat(run.details())
                .contains("\"lake_rows\": 9", "\"duplicates_dropped\": 2", "\"staged_from\": \"driver\"");
        assertThat(run.error()).isNull();

        long loggedBefore = t.batchWindowWritesLogged();
        // The rerun with --json: one object with the same facts as the summary line.
        assertThat(t.backfill("range", "--from", FROM, "--to", TO, "--json"))
                .as(t.lastErr)
                .isZero();
        assertThat(t.batchRows()).isEqualTo(rows);
        long rerun = t.lastRun().runId();
        assertThat(t.lastOut.strip().lines())
                .as("exactly one JSON object on stdout")
                .hasSize(1);
        JsonNode json = new ObjectMapper().readTree(t.lastOut);
        assertThat(json.get("run_id").asLong()).isEqualTo(rerun);
        assertThat(json.get("mode").asText()).isEqualTo("range");
        assertThat(json.get("from").asText()).isEqualTo(FROM);
        assertThat(json.get("to").asText()).isEqualTo(TO);
        assertThat(json.get("forced").asBoolean()).isFalse();
        assertThat(json.get("events").asLong()).isEqualTo(7);
        assertThat(json.get("lake_rows").asLong()).isEqualTo(9);
        // Every row comes out as it stands: none is written again.
        assertThat(json.get("window_rows_written").asLong()).isZero();
        assertThat(json.get("window_rows_unchanged").asLong()).isEqualTo(4);
        assertThat(json.get("window_rows_deleted").asLong()).isZero();
        assertThat(json.get("duration_ms").isIntegralNumber()).isTrue();
        assertThat(json.get("duration_ms").asLong()).isNotNegative();
        assertThat(t.lastRun().windowsDeleted()).isZero();
        // Rows keep the run that last changed them, so the rerun left all of them to the first run.
        long firstRun = earlierRun + 1;
        Map<String, Long> firstRunIds = Map.of(
                "2026-11-28T09:59:00Z/c1/ch1", earlierRun,
                "2026-11-28T10:00:00Z/c1/ch1", firstRun,
                "2026-11-28T10:00:00Z/c1/ch2", firstRun,
                "2026-11-28T10:00:00Z/c2/ch1", firstRun,
                "2026-11-28T10:01:00Z/c1/ch1", firstRun);
        assertThat(t.rowRunIds()).containsExactlyInAnyOrderEntriesOf(firstRunIds);
        assertThat(t.batchWindowWritesLogged())
                .as("windows logged for the reconciler")
                .isEqualTo(loggedBefore);

        // One more event for one key: a rerun writes that row alone, and logs its window alone for the reconciler.
        t.lake.write(List.of(LakeEvent.of("ch2-more", "click", W + 40_000, "c1", "ch2", 20, 108)));
        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();
        long third = t.lastRun().runId();
        assertThat(t.lastOut).contains("1 window rows written, 3 unchanged, 0 deleted");
        assertThat(t.batchRows())
                .contains(row(W, "c1", "ch2", MeasureValues.of(0, 1, 1, 3_020, 2)))
                .hasSize(5);
        Map<String, Long> afterChange = new java.util.HashMap<>(firstRunIds);
        afterChange.put("2026-11-28T10:00:00Z/c1/ch2", third);
        assertThat(t.rowRunIds()).containsExactlyInAnyOrderEntriesOf(afterChange);
        assertThat(t.batchWindowWritesLogged()).isEqualTo(loggedBefore + 1);
    }

    @Test
    void spendBeyondALongIsRecomputedAndStoredExactly() throws Exception {
        t.lake.write(List.of(
                LakeEvent.of("max-1", "conversion", W + 1, "big", "ch1", Long.MAX_VALUE, 200),
                LakeEvent.of("max-2", "conversion", W + 2, "big", "ch1", Long.MAX_VALUE, 201),
                LakeEvent.of("max-3", "click", W + 3, "big", "ch1", Long.MAX_VALUE, 202)));

        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        assertThat(t.batchRows())
                .containsExactly(row(
                        W,
                        "big",
                        "ch1",
                        new MeasureValues(
                                BigInteger.ZERO,
                                BigInteger.ONE,
                                BigInteger.TWO,
                                BigInteger.valueOf(Long.MAX_VALUE).multiply(BigInteger.valueOf(3)),
                                BigInteger.valueOf(3))));
    }

    @Test
    void shrinkingDataRemovesTheKeysThatNoLongerHaveEvents() throws Exception {
        t.lake.write(List.of(FIRST_MILLI));
        List<Path> c2File = t.lake.write(List.of(OTHER_CAMPAIGN));
        assertThat(t.backfill("range", "--from", FROM, "--to", TO)).isZero();
        assertThat(t.batchRows()).extracting(r -> r.key().dimension(0)).containsExactly("c1", "c2");

        t.lake.delete(c2File);
        assertThat(t.backfill("range", "--from", FROM, "--to", TO)).isZero();

        assertThat(t.batchRows()).containsExactly(row(W, "c1", "ch1", MeasureValues.of(1, 0, 0, 100, 1)));
        assertThat(t.lastRun().windowsDeleted()).isEqualTo(1);
        // c1's row comes out as it stands: only the vanished key is a write.
        assertThat(t.lastOut).contains("0 window rows written, 1 unchanged, 1 deleted");
    }

    @Test
    void largeResultsAreStagedFromTheExecutorsWithTheSameRows() throws Exception {
        writeFixture();
        assertThat(t.backfill(0, "range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();
        assertThat(t.batchRows()).containsExactlyElementsOf(EXPECTED);
        assertThat(t.lastRun().details()).contains("\"staged_from\": \"executors\"");
    }

    @Test
    void aRangeWhereTheStreamRanWithAnotherWindowSizeIsRefused() throws Exception {
        writeFixture();
        WindowKey twoMinutes = WindowKey.of(W, "c9", "ch1");
        try (java.sql.Connection c = t.admin()) {
            new StreamWindowMetricsTable(new SetTables(TestSets.defaultSet()))
                    .upsert(
                            c,
                            List.of(new StreamWindowMetricsTable.Row(
                                    new WindowRow(twoMinutes, W + 2 * MINUTE, MeasureValues.of(1, 0, 0, 1, 1)), 1)));
        }
        assertThat(t.backfill("range", "--from", FROM, "--to", TO)).isEqualTo(ExitCode.REFUSED.code());
        assertThat(t.lastErr).contains("stream_window_metrics holds windows of 2m in this range, not 1m");
        assertThat(t.batchRows()).isEmpty();
    }

    @Test
    void aRangeBeyondTheCompletenessBoundaryIsRefusedUnlessForced() throws Exception {
        BatchStack fresh = new BatchStack(dir.resolve("fresh"));
        fresh.lake.write(List.of(FIRST_MILLI));
        assertThat(fresh.backfill("range", "--from", FROM, "--to", TO)).isEqualTo(ExitCode.REFUSED.code());
        assertThat(fresh.lastErr.strip())
                .isEqualTo("recount backfill range: refused: range ends at 2026-11-28T10:02:00Z but no lake"
                        + " completeness recorded yet (the stream job has not committed a checkpoint); rerun later, or pass"
                        + " --force to recompute from an incomplete lake");

        fresh.lakeCompleteUntil(Instant.parse("2026-11-28T10:01:00Z"));
        assertThat(fresh.backfill("range", "--from", FROM, "--to", TO)).isEqualTo(ExitCode.REFUSED.code());
        assertThat(fresh.lastErr).contains("the lake is complete only until 2026-11-28T10:01:00Z");
        assertThat(fresh.lastRun().status()).isEqualTo(BatchRunsTable.Status.FAILED);
        assertThat(fresh.lastRun().error()).contains("the lake is complete only until");
        assertThat(fresh.batchRows()).isEmpty();

        assertThat(fresh.backfill("range", "--from", FROM, "--to", TO, "--force"))
                .isZero();
        assertThat(fresh.lastOut).contains("forced");
        assertThat(fresh.lastRun().forced()).isTrue();
        assertThat(fresh.batchRows()).containsExactly(row(W, "c1", "ch1", MeasureValues.of(1, 0, 0, 100, 1)));

        // Up to the boundary exactly is fine.
        assertThat(fresh.backfill("range", "--from", FROM, "--to", "2026-11-28T10:01:00Z"))
                .isZero();
    }

    static WindowRow row(long start, String campaign, String channel, MeasureValues m) {
        return new WindowRow(WindowKey.of(start, campaign, channel), start + MINUTE, m);
    }

    private static WindowRow[] concat(WindowRow first, List<WindowRow> rest) {
        WindowRow[] all = new WindowRow[rest.size() + 1];
        all[0] = first;
        for (int i = 0; i < rest.size(); i++) all[i + 1] = rest.get(i);
        return all;
    }
}
