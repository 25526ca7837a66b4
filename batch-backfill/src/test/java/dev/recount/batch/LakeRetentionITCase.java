package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.TestSets;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.lake.LakeLayout;
import dev.recount.db.tables.LakeArchivedRowsTable;
import dev.recount.db.tables.WindowRow;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lake.retention} through {@code backfill compact}: old hours go oldest first, but never one that no
 * succeeded backfill covers; what is gone can no longer be recomputed (refused, the results stand), and a late
 * record for such a window is settled without a recompute. The CLI's clock is fixed at 2026-11-29T06:00Z, so with
 * 8 days of retention hours ending by 2026-11-21T06:00Z may go.
 */
class LakeRetentionITCase {
    private static final long H19 = Instant.parse("2026-11-19T10:00:00Z").toEpochMilli();
    private static final long H20 = Instant.parse("2026-11-20T10:00:00Z").toEpochMilli();
    private static final long H20B = Instant.parse("2026-11-20T11:00:00Z").toEpochMilli();
    private static final long H21 = Instant.parse("2026-11-21T10:00:00Z").toEpochMilli();

    @TempDir
    Path dir;

    BatchStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        t.lakeCompleteUntil(Instant.parse("2026-11-28T00:00:00Z"));
        t.set("lake.retention", "8d");
        t.lake.writeLikeStream(List.of(ev("a", H19, 1)));
        t.lake.writeLikeStream(List.of(ev("b", H20, 2)));
        t.lake.writeLikeStream(List.of(ev("c", H20B, 3)));
        t.lake.writeLikeStream(List.of(ev("d", H21, 4)));
    }

    private static LakeEvent ev(String id, long ts, long offset) {
        return LakeEvent.of(id, "impression", ts, "c1", "ch1", 10, offset);
    }

    @Test
    void deletesOldHoursOnlyAsFarAsBackfillsCoverThemAndRefusesToRecomputeThem() throws Exception {
        // What the stream recorded as archived into each hour (one row each): the deleted hours' counts go too.
        try (java.sql.Connection c = t.admin()) {
            for (long hour : List.of(H19, H20, H21)) {
                LakeArchivedRowsTable.record(c, java.util.UUID.randomUUID(), Map.of(LakeLayout.hourStart(hour), 1L));
            }
        }
        // Backfilled: the 19th and the 20th up to 11:00; the 20th's 11:00 hour is not covered by any run yet.
        assertThat(t.backfill("range", "--from", "2026-11-19T00:00:00Z", "--to", "2026-11-20T11:00:00Z"))
                .isZero();
        List<WindowRow> covered = t.batchRows();

        assertThat(t.backfill("compact", "--date", "2026-11-27")).as(t.lastErr).isZero();

        assertThat(t.lastOut)
                .contains(
                        "retention: 2 hours deleted (2 files), lake kept from 2026-11-20T11:00:00Z;"
                                + " stopped at event_date=2026-11-20/event_hour=11: no succeeded range or nightly backfill covers it yet");
        assertThat(t.lake.root().resolve("event_date=2026-11-19")).doesNotExist();
        assertThat(t.lake.root().resolve("event_date=2026-11-20/event_hour=10")).doesNotExist();
        assertThat(t.lake.root().resolve("event_date=2026-11-20/event_hour=11")).isDirectory();
        assertThat(t.lake.root().resolve("event_date=2026-11-21/event_hour=10")).isDirectory();
        try (java.sql.Connection c = t.admin()) {
            assertThat(LakeArchivedRowsTable.rowsByHour(
                                    c, 0, Instant.parse("2100-01-01T00:00:00Z").toEpochMilli())
                            .keySet())
                    .as("the counts of the hours before the horizon are forgotten, the others kept")
                    .containsExactly(LakeLayout.hourStart(H21));
        }

        assertThat(t.backfill("range", "--from", "2026-11-19T10:00:00Z", "--to", "2026-11-19T11:00:00Z"))
                .isEqualTo(ExitCode.REFUSED.code());
        assertThat(t.lastErr.strip())
                .isEqualTo(
                        "recount backfill range: refused: the lake no longer holds events before 2026-11-20T11:00:00Z"
                                + " (deleted by lake.retention); recomputing [2026-11-19T10:00:00Z, 2026-11-19T11:00:00Z) would replace"
                                + " its results with partial ones, so they stand as they are");
        assertThat(t.batchRows()).isEqualTo(covered);

        // Once a backfill covers the next hour, the next run deletes it too, and stops at the retention cutoff.
        assertThat(t.backfill("range", "--from", "2026-11-20T11:00:00Z", "--to", "2026-11-22T00:00:00Z"))
                .isZero();
        assertThat(t.backfill("compact", "--date", "2026-11-27")).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("retention: 1 hours deleted (1 files), lake kept from 2026-11-20T12:00:00Z");
        assertThat(t.lake.root().resolve("event_date=2026-11-20")).doesNotExist();
        assertThat(t.lake.root().resolve("event_date=2026-11-21/event_hour=10")).isDirectory();
    }

    /** With several metric sets, an hour goes only once every set's runs cover it: a set's history needs the lake. */
    @Test
    void anHourGoesOnlyOnceEverySetsBackfillsCoverIt() throws Exception {
        t.metricSets(TestSets.THREE_SETS);
        assertThat(t.backfill(
                        "range", "--set", "default", "--from", "2026-11-19T00:00:00Z", "--to", "2026-11-22T00:00:00Z"))
                .as(t.lastErr)
                .isZero();
        assertThat(t.backfill(
                        "range",
                        "--set",
                        "channel_country",
                        "--from",
                        "2026-11-19T00:00:00Z",
                        "--to",
                        "2026-11-22T00:00:00Z"))
                .as(t.lastErr)
                .isZero();

        assertThat(t.backfill("compact", "--date", "2026-11-27")).as(t.lastErr).isZero();

        assertThat(t.lastOut)
                .contains("stopped at event_date=2026-11-19/event_hour=10: no succeeded range or nightly backfill"
                        + " covers it yet for metric set campaign_slot");
        assertThat(t.lake.root().resolve("event_date=2026-11-19/event_hour=10")).isDirectory();

        assertThat(t.backfill(
                        "range",
                        "--set",
                        "campaign_slot",
                        "--from",
                        "2026-11-19T00:00:00Z",
                        "--to",
                        "2026-11-22T00:00:00Z"))
                .as(t.lastErr)
                .isZero();
        assertThat(t.backfill("compact", "--date", "2026-11-27")).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("retention: 3 hours deleted (3 files), lake kept from 2026-11-20T12:00:00Z");
        assertThat(t.lake.root().resolve("event_date=2026-11-20")).doesNotExist();
    }

    @Test
    void aHourWithAFileInProgressStopsRetentionThere() throws Exception {
        assertThat(t.backfill("range", "--from", "2026-11-19T00:00:00Z", "--to", "2026-11-21T00:00:00Z"))
                .isZero();
        List<Path> inProgress = t.lake.writeInProgress(List.of(ev("b2", H20 + 1, 5)));

        assertThat(t.backfill("compact", "--date", "2026-11-27")).as(t.lastErr).isZero();

        assertThat(t.lastOut)
                .contains(
                        "retention: 1 hours deleted",
                        "stopped at event_date=2026-11-20/event_hour=10: it" + " holds "
                                + inProgress.get(0).getFileName());
        assertThat(inProgress).allMatch(Files::exists);
    }

    @Test
    void aLateRecordForADeletedWindowIsSettledWithoutARecompute() throws Exception {
        BackfillTopic topic = new BackfillTopic(t, 1);
        assertThat(t.backfill("range", "--from", "2026-11-19T00:00:00Z", "--to", "2026-11-20T11:00:00Z"))
                .isZero();
        assertThat(t.backfill("compact", "--date", "2026-11-27")).as(t.lastErr).isZero();
        List<WindowRow> before = t.batchRows();

        // An event of the deleted 19th arrives now (a stream job far behind) and is named on the backfill topic.
        LakeEvent late = ev("late", H19 + 30_000, 9).receivedAfter(9L * 86_400_000);
        t.lake.writeLikeStream(List.of(late));
        topic.send(0, late);

        assertThat(t.backfill("affected")).as(t.lastErr).isZero();

        assertThat(t.lastOut)
                .contains(
                        "0 windows recomputed",
                        "1 records for windows before the lake's retention" + " horizon settled without a recompute");
        assertThat(t.lastRun().details()).contains("\"expired\": 1");
        assertThat(topic.committed()).containsExactly(Map.entry(0, 1L));
        assertThat(t.batchRows()).isEqualTo(before);
    }

    @Test
    void aRetentionShorterThanLateEventsCanArriveIsABadSetting() {
        t.set("lake.retention", "7d");
        assertThat(t.backfill("compact", "--date", "2026-11-27")).isEqualTo(ExitCode.USAGE.code());
        assertThat(t.lastErr.strip())
                .isEqualTo("recount backfill compact: lake.retention 7d is too short: it must be at least"
                        + " validation.max-past + 1d = 8d (late events may still arrive for younger hours)");
    }

    /** Attribution recomputes a late hour with attribution.window of impressions before it: those must still exist. */
    @Test
    void withAttributionTheRetentionMustAlsoCoverTheAttributionWindow() {
        t.set("attribution.enabled", "true");
        t.set("attribution.window", "14d");
        t.set("lake.retention", "21d");
        assertThat(t.backfill("compact", "--date", "2026-11-27")).isEqualTo(ExitCode.USAGE.code());
        assertThat(t.lastErr.strip())
                .isEqualTo("recount backfill compact: lake.retention 21d is too short: with attribution on it must be"
                        + " at least validation.max-past + attribution.window + 1d = 22d (recomputing a late hour"
                        + " reads attribution.window further back)");
    }
}
