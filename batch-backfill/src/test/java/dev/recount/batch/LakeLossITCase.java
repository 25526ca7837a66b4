package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.LakeArchivedRowsTable;
import dev.recount.db.tables.WindowRow;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lake that lost a file must not win: the stream records what it archived per hour (lake_archived_rows), and a
 * backfill refuses an hour whose files hold fewer rows — real PostgreSQL, a local SparkSession, Parquet files.
 */
class LakeLossITCase {
    private static final long MINUTE = 60_000;
    private static final long HOUR = 3_600_000;
    private static final long W = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final String FROM = "2026-11-28T10:00:00Z";
    private static final String TO = "2026-11-28T10:02:00Z";

    static final LakeEvent A1 = LakeEvent.of("a1", "impression", W + 1_000, "c1", "ch1", 10, 1);
    static final LakeEvent A2 = LakeEvent.of("a2", "click", W + 2_000, "c1", "ch1", 20, 2);
    static final LakeEvent A3 = LakeEvent.of("a3", "impression", W + MINUTE + 3_000, "c1", "ch1", 30, 3);
    /** In a second file of the same hour: the one the lake loses. */
    static final LakeEvent B1 = LakeEvent.of("b1", "click", W + 4_000, "c1", "ch1", 40, 4);

    static final LakeEvent B2 = LakeEvent.of("b2", "conversion", W + MINUTE + 5_000, "c1", "ch1", 50, 5);

    @TempDir
    Path dir;

    BatchStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir).set("batch.lake-check-wait", "1s");
        t.lakeCompleteUntil(Instant.parse("2026-11-28T11:00:00Z"));
    }

    @Test
    void aRangeWhoseHourLostAFileIsRefusedUntilForcedAndNothingIsReplacedMeanwhile() throws Exception {
        t.lake.write(List.of(A1, A2, A3));
        List<Path> second = t.lake.write(List.of(B1, B2));
        archived(Map.of(W, 3L));
        archived(Map.of(W, 2L));

        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();
        List<WindowRow> whole =
                List.of(row(W, MeasureValues.of(1, 2, 0, 70, 3)), row(W + MINUTE, MeasureValues.of(1, 0, 1, 80, 2)));
        assertThat(t.batchRows()).containsExactlyElementsOf(whole);

        t.lake.delete(second);
        assertThat(t.backfill("range", "--from", FROM, "--to", TO)).isEqualTo(ExitCode.REFUSED.code());
        assertThat(t.lastErr)
                .contains("1 lake hour(s) hold fewer rows than the stream archived into them: hour "
                        + "2026-11-28T10:00:00Z holds 3 rows, the stream archived 5")
                .contains("--force");
        assertThat(t.batchRows()).as("the complete run's rows stand").containsExactlyElementsOf(whole);
        BatchRunsTable.Run refused = t.lastRun();
        assertThat(refused.status()).isEqualTo(BatchRunsTable.Status.FAILED);
        assertThat(refused.error()).contains("holds 3 rows, the stream archived 5");
        // A range of whole hours: the recompute sums the hour from its windows, and finds it short the same way.
        assertThat(t.backfill("range", "--from", FROM, "--to", "2026-11-28T11:00:00Z"))
                .isEqualTo(ExitCode.REFUSED.code());
        assertThat(t.lastErr).contains("hour 2026-11-28T10:00:00Z holds 3 rows, the stream archived 5");
        assertThat(t.batchRows()).as("the complete run's rows stand").containsExactlyElementsOf(whole);

        // Forced, the run takes what the lake holds, and says so in its record.
        assertThat(t.backfill("range", "--from", FROM, "--to", TO, "--force"))
                .as(t.lastErr)
                .isZero();
        assertThat(t.batchRows())
                .containsExactly(
                        row(W, MeasureValues.of(1, 1, 0, 30, 2)), row(W + MINUTE, MeasureValues.of(1, 0, 0, 30, 1)));
        BatchRunsTable.Run forced = t.lastRun();
        assertThat(forced.forced()).isTrue();
        assertThat(forced.details()).contains("\"lake_short_hours\"").contains("holds 3 rows, the stream archived 5");
    }

    @Test
    void anHourHoldingMoreRowsThanRecordedIsNoLossAndAnHourOutsideTheRangeIsNotLookedAt() throws Exception {
        // Files from before the ledger, or copies written twice: more is not a loss.
        t.lake.write(List.of(A1, A2, A3, B1, B2));
        archived(Map.of(W, 4L));
        // An hour outside the first ranges lost everything; only the day's range reads it.
        archived(Map.of(W + 5 * HOUR, 7L));
        t.lakeCompleteUntil(Instant.parse("2026-11-29T00:00:00Z"));

        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();
        assertThat(t.lastRun().details()).doesNotContain("lake_short_hours");
        assertThat(t.batchRows()).hasSize(2);
        // The whole hour, summed from its windows; then the day, which reads the 15:00 hour too.
        assertThat(t.backfill("range", "--from", FROM, "--to", "2026-11-28T11:00:00Z"))
                .as(t.lastErr)
                .isZero();
        assertThat(t.backfill("range", "--from", "2026-11-28T00:00:00Z", "--to", "2026-11-29T00:00:00Z"))
                .isEqualTo(ExitCode.REFUSED.code());
        assertThat(t.lastErr).contains("hour 2026-11-28T15:00:00Z holds 0 rows, the stream archived 7");
    }

    @Test
    void affectedWindowsInAShortHourWaitWhileOthersAreRecomputed() throws Exception {
        BackfillTopic topic = new BackfillTopic(t, 1);
        LakeEvent lateInShortHour =
                LakeEvent.of("late1", "click", W + 6_000, "c1", "ch1", 7, 10).receivedAfter(HOUR);
        LakeEvent lateElsewhere = LakeEvent.of("late2", "click", W + 2 * HOUR + 6_000, "c1", "ch1", 9, 11)
                .receivedAfter(HOUR);
        t.lake.write(List.of(A1, lateInShortHour, lateElsewhere));
        archived(Map.of(W, 3L, W + 2 * HOUR, 1L)); // hour 10:00 should hold 3 rows, holds 2
        topic.send(0, lateInShortHour);
        topic.send(0, lateElsewhere);
        t.lakeCompleteUntil(Instant.parse("2026-11-28T13:00:00Z"));

        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("1 windows recomputed").contains("1 records pending");
        assertThat(t.batchRows()).containsExactly(row(W + 2 * HOUR, MeasureValues.of(0, 1, 0, 9, 1)));
        // The held record waits in backfill_waiting, committed with the run: the topic's offset moves past it.
        assertThat(topic.committed()).containsExactly(Map.entry(0, 2L));
        assertThat(t.lastOut).contains("1 records pending", "kept in backfill_waiting");

        // The hour's missing file comes back (restored): the record settles.
        t.lake.write(List.of(A2));
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(t.lastOut)
                .contains("1 backfill records, 1 windows recomputed")
                .doesNotContain("pending");
        assertThat(t.batchRows())
                .containsExactly(
                        row(W, MeasureValues.of(1, 2, 0, 37, 3)), row(W + 2 * HOUR, MeasureValues.of(0, 1, 0, 9, 1)));
        assertThat(topic.committed()).containsExactly(Map.entry(0, 2L));
    }

    /**
     * The stream commits an hour's counts and its files apart: counts visible first are no loss once the files
     * follow within batch.lake-check-wait; a shortfall that stays is reported after that wait, not before. Hours the
     * recompute already summed are not counted from the files again unless they look short.
     */
    @Test
    void aShortfallIsCountedAgainUntilTheWaitEndsAndOnlyOneThatStaysIsReported() throws Exception {
        archived(Map.of(W, 5L, W + HOUR, 2L));
        SortedMap<Long, Long> recorded;
        try (Connection c = t.admin()) {
            recorded = LakeShortfall.archived(c, List.of(new TimeRange(W, W + 2 * HOUR)));
        }
        assertThat(recorded).isEqualTo(Map.of(W, 5L, W + HOUR, 2L));
        List<List<TimeRange>> counted = new ArrayList<>();

        // The recompute summed both hours as recorded: the files are not counted.
        assertThat(LakeShortfall.find(
                        recorded,
                        Map.of(W, 5L, W + HOUR, 2L),
                        lakeCounting(counted, n -> Map.of()),
                        Duration.ofSeconds(60)))
                .isEmpty();
        assertThat(counted).isEmpty();

        // The first hour looked short to the recompute; its files become visible at the third count. Only that hour
        // is counted.
        assertThat(LakeShortfall.find(
                        recorded,
                        Map.of(W, 3L, W + HOUR, 2L),
                        lakeCounting(counted, n -> Map.of(W, n < 3 ? 3L : 5L)),
                        Duration.ofSeconds(60)))
                .isEmpty();
        assertThat(counted)
                .hasSize(3)
                .allSatisfy(hours -> assertThat(hours).containsExactly(new TimeRange(W, W + HOUR)));

        // A shortfall that stays: reported once the wait is over, after counting again meanwhile.
        counted.clear();
        assertThat(LakeShortfall.find(
                        recorded,
                        Map.of(),
                        lakeCounting(counted, n -> Map.of(W, 3L, W + HOUR, 2L)),
                        Duration.ofMillis(2_500)))
                .containsExactly(new LakeShortfall.Hour(W, 3, 5));
        assertThat(counted.size()).as("counted again while the wait lasted").isGreaterThan(1);
        assertThat(counted.get(0)).containsExactly(new TimeRange(W, W + HOUR), new TimeRange(W + HOUR, W + 2 * HOUR));

        // Nothing recorded for an hour: nothing to compare, the lake is not even counted.
        counted.clear();
        try (Connection c = t.admin()) {
            assertThat(LakeShortfall.find(
                            c,
                            List.of(new TimeRange(W + 3 * HOUR, W + 3 * HOUR + MINUTE)),
                            lakeCounting(counted, n -> Map.of()),
                            Duration.ofSeconds(60)))
                    .isEmpty();
        }
        assertThat(counted).isEmpty();
    }

    /**
     * A lake whose hours hold {@code rows.apply(n)} rows at its n-th count (from 1); every count's hours are kept in
     * {@code counted}, to say which hours were counted and how often.
     */
    private static Function<List<TimeRange>, SortedMap<Long, Long>> lakeCounting(
            List<List<TimeRange>> counted, IntFunction<Map<Long, Long>> rows) {
        return hours -> {
            counted.add(hours);
            return new TreeMap<>(rows.apply(counted.size()));
        };
    }

    /** Records one commit of the stream's counts, as its lake ledger does. */
    private void archived(Map<Long, Long> rowsByHour) throws Exception {
        try (Connection c = t.admin()) {
            LakeArchivedRowsTable.record(c, UUID.randomUUID(), rowsByHour);
        }
    }

    private static WindowRow row(long start, MeasureValues m) {
        return new WindowRow(WindowKey.of(start, "c1", "ch1"), start + MINUTE, m);
    }
}
