package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.window.WindowAlignment;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Hour directories, the days a compaction locks, and the retention coverage rule, without Spark or a database. */
class LakeHourTest {
    private static final LocalDate DAY = LocalDate.parse("2026-11-28");

    @Test
    void anHourIsItsDirectoryAndItsUtcInterval() {
        LakeHour h =
                LakeHour.containing(Instant.parse("2026-11-28T07:59:59.999Z").toEpochMilli());
        assertThat(h).isEqualTo(new LakeHour(DAY, 7));
        assertThat(h.relativePath()).isEqualTo("event_date=2026-11-28/event_hour=07");
        assertThat(h.id()).isEqualTo("2026-11-28T07");
        assertThat(Instant.ofEpochMilli(h.startMillis())).isEqualTo(Instant.parse("2026-11-28T07:00:00Z"));
        assertThat(Instant.ofEpochMilli(h.endMillis())).isEqualTo(Instant.parse("2026-11-28T08:00:00Z"));
        assertThat(LakeHour.containing(Instant.parse("1969-12-31T23:30:00Z").toEpochMilli()))
                .isEqualTo(new LakeHour(LocalDate.parse("1969-12-31"), 23));
    }

    @Test
    void onlyLakeDirectoriesParse() {
        assertThat(LakeHour.parse("event_date=2026-11-28", "event_hour=23")).contains(new LakeHour(DAY, 23));
        assertThat(LakeHour.parse("event_date=2026-11-28", "event_hour=24")).isEmpty();
        assertThat(LakeHour.parse("event_date=2026-11-28", "event_hour=7")).isEmpty();
        assertThat(LakeHour.parse("event_date=2026-11-28", ".event_hour=07")).isEmpty();
        assertThat(LakeHour.parse("_recount", "event_hour=07")).isEmpty();
        assertThat(LakeHour.parseDate("event_date=2026-02-30")).isEqualTo(Optional.empty());
    }

    @Test
    void aCompactionLocksTheDayBeforeOnlyWhenAWindowSpansMidnight() {
        TimeRange minutes = LakeCompactor.lockRange(DAY, new WindowAlignment(60_000));
        assertThat(minutes)
                .isEqualTo(TimeRange.of(Instant.parse("2026-11-28T00:00:00Z"), Instant.parse("2026-11-29T00:00:00Z")));
        assertThat(RunLocks.plan(
                        Math.floorDiv(minutes.fromMillis(), 86_400_000L),
                        Math.floorDiv(minutes.toMillis() - 60_000, 86_400_000L),
                        null))
                .extracting(RunLocks.LockRequest::what)
                .containsExactly("a run spanning more than 31 days", "UTC day 2026-11-28");

        // 7-minute windows do not divide a day: the window open at midnight started on the 27th.
        TimeRange sevenMinutes = LakeCompactor.lockRange(DAY, new WindowAlignment(7 * 60_000));
        assertThat(Instant.ofEpochMilli(sevenMinutes.fromMillis())).isBefore(Instant.parse("2026-11-28T00:00:00Z"));
        assertThat(RunLocks.plan(
                        Math.floorDiv(sevenMinutes.fromMillis(), 86_400_000L),
                        Math.floorDiv(sevenMinutes.toMillis() - 7 * 60_000, 86_400_000L),
                        null))
                .extracting(RunLocks.LockRequest::what)
                .contains("UTC day 2026-11-27", "UTC day 2026-11-28");
    }

    @Test
    void retentionNeedsOneBackfillRangeCoveringTheWholeHour() {
        long h7 = Instant.parse("2026-11-28T07:00:00Z").toEpochMilli();
        List<long[]> covered = List.of(new long[] {h7 - 3_600_000, h7 + 1_800_000});
        assertThat(LakeRetention.isCovered(covered, LakeHour.containing(h7 - 1)))
                .isTrue();
        assertThat(LakeRetention.isCovered(covered, LakeHour.containing(h7))).isFalse();
        assertThat(LakeRetention.isCovered(List.of(), LakeHour.containing(h7))).isFalse();
    }
}
