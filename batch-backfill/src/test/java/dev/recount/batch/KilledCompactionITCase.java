package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.ChildBackfill;
import dev.recount.batch.testutils.GatedLocalFileSystem;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A real `backfill compact` process (BackfillMain in a child JVM, its own SparkSession) killed with kill -9 at each
 * step of its swap. At the moment of the kill no event may be missing from the lake's visible files; once the next
 * run has finished or dropped what the killed one left, every row is in the lake exactly as often as before, no
 * bookkeeping file is left, and a backfill of the day computes exactly what it computed before. The process is
 * stopped at each step by the file operation that starts it ({@link GatedLocalFileSystem}), not by timing.
 */
class KilledCompactionITCase {
    static final Duration WAIT = Duration.ofSeconds(90);
    static final long MINUTE = 60_000;
    static final long H10 = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    static final long H11 = H10 + 60 * MINUTE;
    static final long H12 = H11 + 60 * MINUTE;
    static final String DAY = "2026-11-28";
    static final String FROM = "2026-11-28T10:00:00Z";
    static final String TO = "2026-11-28T13:00:00Z";

    /** Where the run is killed: the file operation it is stopped at. */
    enum Moment {
        /** A Spark task has created its compacted file in staging, nothing decided yet. */
        REWRITING("create:.*\\.parquet\\.staged"),
        /** Every compacted file staged and synced; the journal, the commit point, not yet in place. */
        DECIDING("rename:.*\\.journal"),
        /** The journal in place, no compacted file published yet. */
        PUBLISHING("rename:part-compacted-.*"),
        /** An hour's compacted files published, the small files they replace not yet deleted. */
        REMOVING("delete:part-(?!compacted-).*\\.parquet"),
        /** The small files deleted, the journal not yet. */
        CLEARING("delete:.*\\.journal");

        final String gate;

        Moment(String gate) {
            this.gate = gate;
        }
    }

    @TempDir
    Path dir;

    BatchStack t;
    ChildBackfill child;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        t.lakeCompleteUntil(Instant.parse("2026-11-28T20:00:00Z"));
        ChildBackfill.waitingForLocks(t, WAIT);
    }

    @AfterEach
    void tearDown() {
        if (child != null) child.destroy();
    }

    private static LakeEvent ev(String id, long ts, String campaign, long cost, long offset) {
        return LakeEvent.of(id, "impression", ts, campaign, "ch1", cost, offset);
    }

    /** Three complete hours of three small files each, as the stream job's checkpoints leave them; one duplicate. */
    private void writeDay() {
        for (long hour : List.of(H10, H11, H12)) {
            for (int file = 0; file < 3; file++) {
                long offset = hour / MINUTE + file * 10L;
                t.lake.writeLikeStream(List.of(
                        ev("e" + offset, hour + file * MINUTE, "c1", 100 + file, offset),
                        ev("f" + offset, hour + 30 * MINUTE + file, "c2", 7, offset + 1)));
            }
        }
        // A copy the stream's replay wrote again: the batch counts it once, and compaction must keep both copies.
        long offset = H10 / MINUTE;
        t.lake.writeLikeStream(List.of(ev("e" + offset, H10, "c1", 100, offset)));
    }

    @ParameterizedTest
    @EnumSource(Moment.class)
    void aCompactionKilledAtAnyStepLosesAndDoublesNothingOnceTheNextRunFinishesIt(Moment moment) throws Exception {
        writeDay();
        List<WindowRow> before = range();
        Map<String, Integer> rows = visibleRows();

        Path reached = dir.resolve("gate-reached");
        child = ChildBackfill.start(
                t,
                dir.resolve("child.log"),
                GatedLocalFileSystem.settings(moment.gate, reached),
                "compact",
                "--date",
                DAY);
        Poll.until(WAIT, "the compaction to reach " + moment, () -> Files.exists(reached) || !child.isAlive());
        assertThat(Files.exists(reached))
                .as("stopped at %s; its log: %s", moment, Files.readString(child.log()))
                .isTrue();
        child.kill9(WAIT);
        ChildBackfill.awaitSessionsEnded(t);

        Map<String, Integer> atTheKill = visibleRows();
        assertThat(missingFrom(atTheKill, rows))
                .as("rows missing from the visible files at the kill")
                .isEmpty();
        if (moment == Moment.REMOVING) {
            assertThat(count(atTheKill))
                    .as("an hour's rows twice, for a reader that takes no lock")
                    .isGreaterThan(count(rows));
        } else {
            assertThat(atTheKill).as("the visible rows at the kill").isEqualTo(rows);
        }

        // As users resume: a backfill finishes a decided swap before it reads the hour; the next compaction drops
        // an undecided one's staged files and compacts again.
        assertThat(range()).as("a backfill right after the kill").isEqualTo(before);
        assertThat(t.backfill("compact", "--date", DAY)).as(t.lastErr).isZero();

        assertThat(visibleRows()).as("every row exactly as often as before").isEqualTo(rows);
        for (long hour : List.of(H10, H11, H12)) {
            assertThat(visibleFiles(hour)).as("hour %s compacted", hour).hasSize(1);
        }
        assertThat(bookkeeping()).as("no journal or staged file left").isEmpty();
        assertThat(range()).isEqualTo(before);
    }

    private List<WindowRow> range() throws Exception {
        assertThat(t.backfill("range", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();
        return t.batchRows();
    }

    /** Every row of every visible lake file, with its hour directory, and how often it is there. */
    private Map<String, Integer> visibleRows() throws IOException {
        Map<String, Integer> rows = new HashMap<>();
        for (long hour : List.of(H10, H11, H12)) {
            Path hourDir = LakeFiles.hourDirectory(t.lake.root(), hour);
            for (String name : visibleFiles(hour)) {
                org.apache.hadoop.fs.Path file =
                        new org.apache.hadoop.fs.Path(hourDir.resolve(name).toUri());
                try (ParquetReader<Group> in = ParquetReader.builder(new GroupReadSupport(), file)
                        .withConf(new Configuration())
                        .build()) {
                    for (Group g = in.read(); g != null; g = in.read()) {
                        rows.merge(hour + " " + g.toString().replace('\n', ' '), 1, Integer::sum);
                    }
                }
            }
        }
        return rows;
    }

    private static int count(Map<String, Integer> rows) {
        return rows.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** The rows of {@code expected} that {@code actual} holds fewer times. */
    private static List<String> missingFrom(Map<String, Integer> actual, Map<String, Integer> expected) {
        List<String> missing = new ArrayList<>();
        expected.forEach((row, n) -> {
            if (actual.getOrDefault(row, 0) < n) missing.add(row);
        });
        return missing;
    }

    private List<String> visibleFiles(long hourStart) throws IOException {
        return LakeFiles.visible(t.lake.root(), hourStart);
    }

    private List<Path> bookkeeping() throws IOException {
        return LakeFiles.bookkeeping(t.lake.root());
    }
}
