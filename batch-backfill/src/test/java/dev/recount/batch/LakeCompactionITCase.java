package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.SharedSpark;
import dev.recount.batch.testutils.StreamLakeFiles;
import dev.recount.core.cli.ExitCode;
import dev.recount.db.tables.WindowRow;
import dev.recount.testkit.RecordingPushgateway;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code backfill compact} on a real lake (files written as the stream job writes them, duplicates, late files,
 * a file still in progress) against the real PostgreSQL: compaction never changes what a backfill computes, is
 * idempotent, leaves incomplete hours and in-progress files alone, keeps the files' schema, and a swap that died
 * half-way is finished before anyone reads the hour.
 */
class LakeCompactionITCase {
    private static final long MINUTE = 60_000;
    private static final long H10 = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    private static final long H11 = H10 + 60 * MINUTE;
    private static final long H12 = H11 + 60 * MINUTE;
    private static final long H13 = H12 + 60 * MINUTE;
    private static final long H23 = Instant.parse("2026-11-28T23:00:00Z").toEpochMilli();
    private static final String DAY = "2026-11-28";
    private static final String FROM = "2026-11-28T10:00:00Z";
    private static final String TO = "2026-11-28T14:00:00Z";

    @TempDir
    Path dir;

    BatchStack t;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        t.lakeCompleteUntil(Instant.parse("2026-11-28T20:00:00Z"));
    }

    private static LakeEvent ev(String id, String type, long ts, String campaign, long cost, long offset) {
        return LakeEvent.of(id, type, ts, campaign, "ch1", cost, offset);
    }

    /**
     * Hour 10: three stream checkpoints' files, with a replayed copy and a copy at a lower offset with another
     * payload (the lower one counts). Hour 11: files written by another writer (Spark), one of them late. Hour 12:
     * a single file. Hour 13: a committed file and one still in progress. Hour 23: beyond the completeness boundary.
     */
    private List<Path> writeDay() {
        LakeEvent dupHigh = ev("dup", "impression", H10 + 5_000, "c1", 999, 30);
        LakeEvent dupLow = ev("dup", "impression", H10 + 5_000, "c1", 111, 7);
        t.lake.writeLikeStream(List.of(
                ev("a1", "impression", H10, "c1", 100, 1),
                ev("a2", "click", H10 + 59 * MINUTE, "c2", 250, 2),
                dupHigh));
        t.lake.writeLikeStream(List.of(
                ev("a3", "conversion", H10 + MINUTE, "c1", 5_000, 3),
                ev("a1", "impression", H10, "c1", 100, 1).copyAt("ad-events", 1, 0)));
        t.lake.writeLikeStream(List.of(dupLow, ev("a4", "impression", H10 + 2 * MINUTE, "c1", Long.MAX_VALUE, 40)));

        t.lake.write(List.of(ev("b1", "impression", H11 + 1, "c1", 1, 50), ev("b2", "click", H11 + 2, "c1", 2, 51)));
        t.lake.write(List.of(ev("b3", "impression", H11 + 3, "c1", 3, 52).receivedAfter(7_200_000)));

        t.lake.writeLikeStream(List.of(ev("c1", "impression", H12 + 1, "c3", 9, 60)));

        t.lake.writeLikeStream(List.of(ev("d1", "impression", H13 + 1, "c1", 4, 70)));
        t.lake.writeLikeStream(List.of(ev("d2", "click", H13 + 2, "c1", 4, 71)));
        List<Path> inProgress = t.lake.writeInProgress(List.of(ev("d3", "click", H13 + 3, "c1", 8, 72)));

        t.lake.writeLikeStream(List.of(ev("z1", "impression", H23, "c1", 1, 80)));
        t.lake.writeLikeStream(List.of(ev("z2", "impression", H23 + 1, "c1", 1, 81)));
        return inProgress;
    }

    @Test
    void compactionNeverChangesABackfillResultAndCompactingAgainDoesNothing() throws Exception {
        List<Path> inProgress = writeDay();
        Result before = range(FROM, TO);

        assertThat(t.backfill("compact", "--date", DAY)).as(t.lastErr).isZero();

        assertThat(t.lastOut)
                .contains(
                        "5 hours, 3 compacted (7 files into 3, 12 rows), 1 already compact, 1 not"
                                + " complete yet, 0 failed",
                        "retention: keep forever");
        assertThat(visibleFiles(H10)).hasSize(1).allMatch(n -> n.startsWith("part-compacted-"));
        assertThat(visibleFiles(H11)).hasSize(1).allMatch(n -> n.startsWith("part-compacted-"));
        assertThat(visibleFiles(H12)).hasSize(1).noneMatch(n -> n.startsWith("part-compacted-"));
        assertThat(visibleFiles(H13)).hasSize(1).allMatch(n -> n.startsWith("part-compacted-"));
        assertThat(visibleFiles(H23)).as("beyond the completeness boundary").hasSize(2);
        assertThat(inProgress).allMatch(Files::exists);
        assertThat(range(FROM, TO)).isEqualTo(before);

        Map<Long, List<String>> compacted = filesByHour();
        assertThat(t.backfill("compact", "--date", DAY)).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("5 hours, 0 compacted", "4 already compact");
        assertThat(filesByHour()).isEqualTo(compacted);
        assertThat(bookkeeping()).as("no journal or staged file left").isEmpty();

        // The stream commits the file that was in progress, and a late event adds a file to hour 10.
        t.lake.commit(inProgress);
        t.lake.writeLikeStream(
                List.of(ev("late", "click", H10 + 30_000, "c9", 77, 90).receivedAfter(86_400_000)));
        Result grown = range(FROM, TO);
        assertThat(grown.rows()).isNotEqualTo(before.rows());

        assertThat(t.backfill("compact", "--date", DAY)).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("2 compacted (4 files into 2, 11 rows)");
        assertThat(visibleFiles(H10)).hasSize(1);
        assertThat(visibleFiles(H13)).hasSize(1);
        assertThat(range(FROM, TO)).isEqualTo(grown);
    }

    @Test
    void compactedFilesKeepTheFilesSchemaIncludingAColumnAddedLater() throws Exception {
        t.lake.writeLikeStream(List.of(ev("a1", "impression", H10, "c1", 100, 1)));
        t.lake.writeLikeStream(List.of(ev("a2", "click", H10 + 1, "c1", 200, 2)));
        t.lake.writeLikeStream(List.of(ev("b1", "impression", H11, "c1", 1, 3)));
        t.lake.writeLikeStream(
                List.of(ev("b2", "impression", H11 + 1, "c1", 2, 4), ev("b3", "click", H11 + 2, "c1", 3, 5)),
                e -> e.eventId().equals("b2") ? "req-" + e.eventId() : null);
        Result before = range(FROM, TO);

        assertThat(t.backfill("compact", "--from", FROM, "--to", TO))
                .as(t.lastErr)
                .isZero();

        assertThat(schemaOf(onlyFile(H10))).isEqualTo(StreamLakeFiles.SCHEMA);
        MessageType merged = schemaOf(onlyFile(H11));
        assertThat(merged.getFields()).containsExactlyElementsOf(StreamLakeFiles.WITH_REQUEST_ID.getFields());
        Map<String, String> requestIds = new TreeMap<>();
        for (Row r : SharedSpark.session()
                .read()
                .parquet(onlyFile(H11).toString())
                .select("event_id", StreamLakeFiles.REQUEST_ID)
                .collectAsList()) {
            requestIds.put(r.getString(0), r.isNullAt(1) ? "null" : r.getString(1));
        }
        assertThat(requestIds)
                .containsExactly(Map.entry("b1", "null"), Map.entry("b2", "req-b2"), Map.entry("b3", "null"));
        assertThat(range(FROM, TO)).isEqualTo(before);
    }

    @Test
    void aSwapThatDiedHalfWayIsFinishedBeforeABackfillReadsTheHour() throws Exception {
        writeDay();
        Result before = range(FROM, TO);
        LakeStorage lake = LakeStorage.open(t.lake.root().toString(), new Configuration());
        LakeHour hour = LakeHour.containing(H10);
        List<String> inputs = visibleFiles(H10);

        // What a compaction leaves when it dies after its journal and the first rename: the compacted file and the
        // small files it replaces are all visible, so every event of the hour is there twice.
        String generation = "20261129T010000-deadbeef";
        org.apache.hadoop.fs.Path staged = new org.apache.hadoop.fs.Path(
                lake.controlDirectory("staging"), DAY + "/" + hour.id() + "-" + generation + "-0.parquet.staged");
        List<String> inputUris = inputs.stream()
                .map(n -> t.lake.root()
                        .resolve(hour.relativePath())
                        .resolve(n)
                        .toUri()
                        .toString())
                .toList();
        HourRewrite.Result written =
                HourRewrite.run(new HourRewrite.Task(hour.id(), inputUris, staged.toString()), Map.of());
        assertThat(written.error()).isNull();
        CompactionJournal journal = new CompactionJournal(
                hour.id(),
                generation,
                List.of(new CompactionJournal.Output(
                        "_recount/staging/" + DAY + "/" + staged.getName(),
                        "part-compacted-" + generation + "-0.parquet")),
                inputs,
                written.rows());
        journal.write(lake);
        lake.fs()
                .rename(
                        staged,
                        new org.apache.hadoop.fs.Path(
                                lake.hourDirectory(hour), "part-compacted-" + generation + "-0.parquet"));
        assertThat(visibleFiles(H10)).hasSize(inputs.size() + 1);
        // And what one leaves when it dies before its journal: a staged file nothing refers to.
        Path orphan =
                Files.writeString(t.lake.root().resolve("_recount/staging/" + DAY + "/orphan.parquet.staged"), "x");

        assertThat(range(FROM, TO))
                .as("identical rows and identical lake rows: the swap was finished first")
                .isEqualTo(before);
        assertThat(visibleFiles(H10)).containsExactly("part-compacted-" + generation + "-0.parquet");
        assertThat(Files.exists(orphan)).isTrue();

        assertThat(t.backfill("compact", "--date", DAY)).as(t.lastErr).isZero();
        assertThat(Files.exists(orphan))
                .as("leftovers of a run that died are dropped")
                .isFalse();
        assertThat(bookkeeping()).isEmpty();
        assertThat(range(FROM, TO)).isEqualTo(before);
    }

    /** Also what each run pushes (ScheduledRunMetrics): a run that gave up records no success, the next one does. */
    @Test
    void compactionWaitsForTheBackfillLockOfTheDay() throws Exception {
        writeDay();
        Map<Long, List<String>> files = filesByHour();
        long at = BatchStack.CLOCK.instant().getEpochSecond();
        try (RecordingPushgateway pushgateway = new RecordingPushgateway()) {
            try (Connection otherRun = t.admin();
                    PreparedStatement ps = otherRun.prepareStatement("SELECT pg_advisory_lock(?, ?)")) {
                ps.setInt(1, RunLocks.namespace(t.schema));
                ps.setInt(2, RunLocks.dayKey(java.time.LocalDate.parse(DAY).toEpochDay()));
                ps.execute();

                assertThat(t.backfillWith(pushgateway.environment(), "compact", "--date", DAY))
                        .isEqualTo(ExitCode.BUSY.code());
                assertThat(t.lastErr.strip())
                        .isEqualTo("recount backfill compact: busy: another backfill holds an overlapping range"
                                + " (UTC day 2026-11-28); gave up after 2s (batch.lock-timeout)");
            }
            assertThat(filesByHour()).isEqualTo(files);
            assertThat(pushgateway.pushes()).singleElement().satisfies(p -> {
                assertThat(p.method()).isEqualTo("POST");
                assertThat(p.path()).isEqualTo("/metrics/job/recount_lake_compact");
                assertThat(p.body())
                        .contains(
                                "recount_lake_compact_last_run_timestamp_seconds " + at + "\n",
                                "recount_lake_compact_last_exit_code " + ExitCode.BUSY.code() + "\n",
                                "recount_lake_compact_hours_failed 0\n")
                        .doesNotContain("last_success");
            });

            assertThat(t.backfillWith(pushgateway.environment(), "compact", "--date", DAY))
                    .as(t.lastErr)
                    .isZero();
            assertThat(pushgateway.pushes()).hasSize(2);
            assertThat(pushgateway.pushes().get(1).body())
                    .contains(
                            "recount_lake_compact_last_exit_code 0\n",
                            "recount_lake_compact_last_success_timestamp_seconds " + at + "\n");
        }
    }

    @Test
    void nothingIsCompactedWithoutACompletenessBoundaryOrBeyondIt() throws Exception {
        BatchStack fresh = new BatchStack(dir.resolve("fresh"));
        fresh.lake.writeLikeStream(List.of(ev("a1", "impression", H10, "c1", 100, 1)));
        fresh.lake.writeLikeStream(List.of(ev("a2", "impression", H10, "c1", 100, 2)));

        assertThat(fresh.backfill("compact", "--date", DAY)).isEqualTo(ExitCode.REFUSED.code());
        assertThat(fresh.lastErr).contains("no lake completeness recorded yet");

        fresh.lakeCompleteUntil(Instant.parse("2026-11-28T10:30:00Z"));
        assertThat(fresh.backfill("compact", "--from", "2026-11-28T11:00:00Z", "--to", TO))
                .isEqualTo(ExitCode.REFUSED.code());
        assertThat(fresh.lastErr).contains("starts at or beyond the lake's completeness boundary 2026-11-28T10:30:00Z");

        assertThat(fresh.backfill("compact", "--date", DAY)).as(fresh.lastErr).isZero();
        assertThat(fresh.lastOut).contains("1 hours, 0 compacted", "1 not complete yet");
    }

    /** A backfill's rows and the lake rows it read: both must survive compaction unchanged. */
    record Result(List<WindowRow> rows, String lakeRows) {}

    private Result range(String from, String to) throws Exception {
        assertThat(t.backfill("range", "--from", from, "--to", to))
                .as(t.lastErr)
                .isZero();
        String details = t.lastRun().details();
        return new Result(t.batchRows(), details.replaceAll(".*\"lake_rows\": (\\d+).*", "$1"));
    }

    private List<String> visibleFiles(long hourStart) throws IOException {
        return LakeFiles.visible(t.lake.root(), hourStart);
    }

    private Path onlyFile(long hourStart) throws IOException {
        List<String> files = visibleFiles(hourStart);
        assertThat(files).hasSize(1);
        return t.lake.root()
                .resolve(LakeHour.containing(hourStart).relativePath())
                .resolve(files.get(0));
    }

    private Map<Long, List<String>> filesByHour() throws IOException {
        Map<Long, List<String>> all = new HashMap<>();
        for (long h : List.of(H10, H11, H12, H13, H23)) all.put(h, visibleFiles(h));
        return all;
    }

    private List<Path> bookkeeping() throws IOException {
        return LakeFiles.bookkeeping(t.lake.root());
    }

    private static MessageType schemaOf(Path file) throws IOException {
        try (ParquetFileReader r = ParquetFileReader.open(
                HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(file.toUri()), new Configuration()))) {
            return r.getFooter().getFileMetaData().getSchema();
        }
    }
}
