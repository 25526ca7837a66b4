package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.RecordingPushgateway;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code backfill nightly}: a calendar day in the configured zone (New York here), then the affected windows. */
class NightlyBackfillITCase {
    private static final long MINUTE = 60_000;
    /** 2026-11-28 in New York (UTC-5) is [2026-11-28T05:00Z, 2026-11-29T05:00Z): it spans two UTC dates. */
    private static final long DAY_START = Instant.parse("2026-11-28T05:00:00Z").toEpochMilli();

    private static final long DAY_END = Instant.parse("2026-11-29T05:00:00Z").toEpochMilli();
    private static final long EARLIER = Instant.parse("2026-11-27T12:00:00Z").toEpochMilli();

    static final LakeEvent DAY_BEFORE = LakeEvent.of("before", "click", DAY_START - 1, "c1", "ch1", 1, 1);
    static final LakeEvent DAY_FIRST = LakeEvent.of("first", "impression", DAY_START, "c1", "ch1", 10, 2);
    static final LakeEvent DAY_LAST = LakeEvent.of("last", "click", DAY_END - 1, "c1", "ch1", 20, 3);
    static final LakeEvent DAY_AFTER = LakeEvent.of("after", "click", DAY_END, "c1", "ch1", 1, 4);
    /** A too-late event of an earlier day, named on the backfill topic. */
    static final LakeEvent LATE =
            LakeEvent.of("late", "conversion", EARLIER + 5, "c9", "ch1", 70, 5).receivedAfter(86_400_000);

    @TempDir
    Path dir;

    BatchStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir).set("time-zone", "America/New_York");
        t.lakeCompleteUntil(Instant.parse("2026-11-29T06:00:00Z"));
        t.lake.write(List.of(DAY_BEFORE, DAY_FIRST, DAY_LAST, DAY_AFTER, LATE));
        new BackfillTopic(t, 1).send(0, LATE);
    }

    @Test
    void recomputesTheZonedDayAndTheAffectedWindowsAndIsIdempotent() throws Exception {
        assertThat(t.backfill("nightly", "--date", "2026-11-28")).as(t.lastErr).isZero();

        List<String> lines = t.lastOut.strip().lines().toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("(nightly [2026-11-28T05:00:00Z, 2026-11-29T05:00:00Z)): 2 events");
        assertThat(lines.get(1)).contains("(affected): 1 backfill records, 1 windows recomputed");
        List<WindowRow> rows = t.batchRows();
        assertThat(rows)
                .containsExactly(
                        row(EARLIER, "c9", "ch1", MeasureValues.of(0, 0, 1, 70, 1)),
                        row(DAY_START, "c1", "ch1", MeasureValues.of(1, 0, 0, 10, 1)),
                        row(DAY_END - MINUTE, "c1", "ch1", MeasureValues.of(0, 1, 0, 20, 1)));
        List<BatchRunsTable.Run> runs = t.runs();
        assertThat(runs)
                .extracting(BatchRunsTable.Run::mode)
                .containsExactly(BatchRunsTable.Mode.NIGHTLY, BatchRunsTable.Mode.AFFECTED);
        assertThat(runs.get(0).rangeFrom()).isEqualTo(DAY_START);
        assertThat(runs.get(0).rangeTo()).isEqualTo(DAY_END);

        // A lake.path that does not exist is an error, never "no events" (which would wipe the day's rows).
        t.set("lake.path", dir.resolve("no-such-lake").toString());
        assertThat(t.backfill("nightly", "--date", "2026-11-28")).isEqualTo(ExitCode.FAILED.code());
        assertThat(t.lastErr).contains("no-such-lake does not exist (setting lake.path or --lake)");
        assertThat(t.batchRows()).isEqualTo(rows);

        // Without --date: "yesterday" in New York as of the test clock (2026-11-29T06:00Z, 01:00 local); --lake
        // overrides the setting.
        assertThat(t.backfill("nightly", "--lake", t.lake.root().toString()))
                .as(t.lastErr)
                .isZero();
        assertThat(t.batchRows()).isEqualTo(rows);
        BatchRunsTable.Run again = t.lastRunOfMode(BatchRunsTable.Mode.NIGHTLY);
        assertThat(again.status()).isEqualTo(BatchRunsTable.Status.SUCCEEDED);
        assertThat(again.rangeFrom()).isEqualTo(DAY_START);
        // The same day again: both rows come out as they stand, so none is written.
        assertThat(again.windowsWritten()).isZero();
        assertThat(again.details()).contains("\"window_rows_unchanged\": 2");
        assertThat(again.windowsDeleted()).isZero();
    }

    /**
     * Every run pushes its outcome (ScheduledRunMetrics), so that RecountNightlyBackfillNotCompleting can tell when
     * none has succeeded for too long: a refused run records no success, and a push that fails changes no exit code.
     */
    @Test
    void everyRunPushesItsOutcomeAndOnlyASuccessRecordsItsTime() throws Exception {
        long at = BatchStack.CLOCK.instant().getEpochSecond();
        String unreachable;
        try (RecordingPushgateway pushgateway = new RecordingPushgateway()) {
            assertThat(t.backfillWith(pushgateway.environment(), "nightly", "--date", "2026-11-28"))
                    .as(t.lastErr)
                    .isZero();
            assertThat(pushgateway.pushes()).singleElement().satisfies(p -> {
                assertThat(p.method()).isEqualTo("POST");
                assertThat(p.path()).isEqualTo("/metrics/job/recount_backfill_nightly");
                assertThat(p.body())
                        .contains(
                                "recount_backfill_nightly_last_run_timestamp_seconds " + at + "\n",
                                "recount_backfill_nightly_last_exit_code 0\n",
                                "recount_backfill_nightly_last_success_timestamp_seconds " + at + "\n");
            });

            // The next day reaches beyond the lake's completeness boundary (the stream is behind): refused.
            assertThat(t.backfillWith(pushgateway.environment(), "nightly", "--date", "2026-11-29"))
                    .isEqualTo(ExitCode.REFUSED.code());
            assertThat(pushgateway.pushes()).hasSize(2);
            assertThat(pushgateway.pushes().get(1).body())
                    .contains("recount_backfill_nightly_last_exit_code " + ExitCode.REFUSED.code() + "\n")
                    .doesNotContain("last_success");
            assertThat(t.lastErr).doesNotContain("pushing metrics");
            unreachable = pushgateway.url();
        }

        assertThat(t.backfillWith(Map.of("RECOUNT_PUSHGATEWAY_URL", unreachable), "nightly", "--date", "2026-11-28"))
                .isZero();
        assertThat(t.lastErr.strip())
                .startsWith("recount backfill nightly: pushing metrics to " + unreachable + " failed (the run's"
                        + " outcome stands): ")
                .doesNotContain("\n");
    }

    static WindowRow row(long start, String campaign, String channel, MeasureValues m) {
        long s = start - Math.floorMod(start, MINUTE);
        return new WindowRow(WindowKey.of(s, campaign, channel), s + MINUTE, m);
    }
}
