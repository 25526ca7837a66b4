package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.batch.testutils.BackfillTopic;
import dev.recount.batch.testutils.BatchStack;
import dev.recount.batch.testutils.LakeEvent;
import dev.recount.batch.testutils.TestSets;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.db.tables.WindowRow;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code backfill affected}: too-late records on a real backfill topic, a real consumer group, real Parquet. */
class AffectedBackfillITCase {
    private static final long MINUTE = 60_000;
    static final long W1 = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    static final long W2 = W1 + MINUTE;
    static final long W3 = W1 + 5 * MINUTE;
    private static final long BEYOND = Instant.parse("2026-11-28T11:30:00Z").toEpochMilli();
    private static final long HOUR = 3_600_000;

    static final LakeEvent A1 = LakeEvent.of("a1", "impression", W1 + 1_000, "c1", "ch1", 10, 1);
    static final LakeEvent B1 = LakeEvent.of("b1", "impression", W2 + 1_000, "c1", "ch1", 30, 2);
    static final LakeEvent C1 = LakeEvent.of("c1", "impression", W3 + 1_000, "c2", "ch1", 40, 3);
    static final LakeEvent LATE1 =
            LakeEvent.of("late1", "click", W1 + 2_000, "c1", "ch1", 20, 50).receivedAfter(HOUR);
    static final LakeEvent B2 = LakeEvent.of("b2", "click", W2 + 2_000, "c1", "ch1", 5, 51);
    static final LakeEvent LATE2 =
            LakeEvent.of("late2", "conversion", W3 + 2_000, "c2", "ch1", 50, 52).receivedAfter(HOUR);
    static final LakeEvent LATE3 =
            LakeEvent.of("late3", "click", W2 + 3_000, "c1", "ch1", 7, 53).receivedAfter(HOUR);
    static final LakeEvent LATE5 =
            LakeEvent.of("late5", "click", BEYOND + 1, "c1", "ch1", 9, 54).receivedAfter(HOUR);

    @TempDir
    Path dir;

    BatchStack t;
    BackfillTopic topic;

    @BeforeEach
    void setUp() throws Exception {
        t = new BatchStack(dir);
        topic = new BackfillTopic(t, 2);
        t.lakeCompleteUntil(Instant.parse("2026-11-28T11:00:00Z"));
    }

    @Test
    void recomputesOnlyTheNamedWindowsAndCommitsTheirOffsetsAfterTheWrite() throws Exception {
        t.lake.write(List.of(A1, B1, C1));
        assertThat(t.backfill("range", "--from", "2026-11-28T10:00:00Z", "--to", "2026-11-28T10:06:00Z"))
                .isZero();
        long rangeRun = t.lastRun().runId();
        // Later: two too-late events reach the lake and the topic; W2 also gets an event nobody names.
        t.lake.write(List.of(LATE1, B2, LATE2));
        topic.send(0, LATE1);
        topic.send(1, LATE2);
        assertThat(topic.committed()).isEmpty();

        assertThat(t.backfill("affected")).as(t.lastErr).isZero();

        long affectedRun = t.lastRun().runId();
        assertThat(t.lastOut)
                .contains("run " + affectedRun + " (affected): 2 backfill records, 2 windows recomputed"
                        + " (4 events, 2 window rows written, 0 unchanged, 0 deleted)")
                .doesNotContain("pending");
        assertThat(t.batchRows())
                .containsExactly(
                        row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)),
                        row(W2, "c1", "ch1", MeasureValues.of(1, 0, 0, 30, 1)),
                        row(W3, "c2", "ch1", MeasureValues.of(1, 0, 1, 90, 2)));
        assertThat(t.rowRunIds().values()).containsExactly(affectedRun, rangeRun, affectedRun);
        assertThat(topic.committed()).containsExactly(Map.entry(0, 1L), Map.entry(1, 1L));
        BatchRunsTable.Run run = t.lastRun();
        assertThat(run.mode()).isEqualTo(BatchRunsTable.Mode.AFFECTED);
        assertThat(run.rangeFrom()).isEqualTo(W1);
        assertThat(run.rangeTo()).isEqualTo(W3 + MINUTE);
        assertThat(run.eventsRead()).isEqualTo(4);
        assertThat(run.details()).contains("\"2026-11-28T10:00:00Z\", \"2026-11-28T10:05:00Z\"");

        // Nothing new on the topic: nothing to do, nothing changes.
        assertThat(t.backfill("affected")).isZero();
        assertThat(t.lastOut).contains("0 backfill records, 0 windows recomputed");
        assertThat(t.rowRunIds().values()).containsExactly(affectedRun, rangeRun, affectedRun);
        assertThat(topic.committed()).containsExactly(Map.entry(0, 1L), Map.entry(1, 1L));
    }

    @Test
    void anEventNotYetInTheLakeWaitsInTheTableAndIsSettledOnceItIs() throws Exception {
        t.lake.write(List.of(A1, LATE1, C1, LATE2, LATE5));
        List<Path> inProgress = t.lake.writeInProgress(List.of(LATE3));
        topic.send(0, LATE3, LATE1);
        topic.send(1, LATE2, LATE5);

        assertThat(t.backfill("affected")).as(t.lastErr).isZero();

        // LATE3's file is not committed yet and LATE5 is beyond the completeness boundary: both wait in
        // backfill_waiting, committed with the run's results, and the topic's offsets move past everything read.
        assertThat(t.lastOut).contains("2 records pending", "kept in backfill_waiting");
        assertThat(topic.committed()).containsExactly(Map.entry(0, 2L), Map.entry(1, 2L));
        assertThat(waiting())
                .containsExactly(
                        "0@0 late3: not in the lake yet", "1@1 late5: beyond the lake's completeness boundary");
        assertThat(t.batchRows())
                .containsExactly(
                        row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)),
                        row(W3, "c2", "ch1", MeasureValues.of(1, 0, 1, 90, 2)));
        assertThat(t.lastRun().details())
                .contains(
                        "\"event_id\": \"late3\"",
                        "not in the lake yet",
                        "\"event_id\": \"late5\"",
                        "beyond the lake's completeness boundary");

        // Nothing changed: both are checked again and still wait; nothing new is read from the topic.
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("2 backfill records, 0 windows recomputed", "2 records pending");
        assertThat(waiting()).hasSize(2);

        // The stream job's next checkpoint commits the file and moves the boundary.
        t.lake.commit(inProgress);
        t.lakeCompleteUntil(Instant.parse("2026-11-28T12:00:00Z"));
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();

        assertThat(t.lastOut)
                .contains("2 backfill records, 2 windows recomputed")
                .doesNotContain("pending");
        assertThat(waiting()).isEmpty();
        assertThat(topic.committed()).containsExactly(Map.entry(0, 2L), Map.entry(1, 2L));
        assertThat(t.batchRows())
                .containsExactly(
                        row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)),
                        row(W2, "c1", "ch1", MeasureValues.of(0, 1, 0, 7, 1)),
                        row(W3, "c2", "ch1", MeasureValues.of(1, 0, 1, 90, 2)),
                        row(BEYOND, "c1", "ch1", MeasureValues.of(0, 1, 0, 9, 1)));
    }

    @Test
    void aRecordThatCanNeverBeSettledHoldsUpNothingBehindIt() throws Exception {
        // NEVER names an event no lake file holds (a forged record, or a file lost for good). It used to hold the
        // group's offset: every record behind it was read again by every run, and those beyond --max-records never.
        LakeEvent never =
                LakeEvent.of("never", "click", W2 + 4_000, "c1", "ch1", 3, 60).receivedAfter(HOUR);
        t.lake.write(List.of(A1, LATE1, C1, LATE2));
        topic.send(0, never, LATE1);

        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(topic.committed()).containsExactly(Map.entry(0, 2L));
        assertThat(waiting()).containsExactly("0@0 never: not in the lake yet");

        // The next run reads only what came after, and checks NEVER again.
        topic.send(0, LATE2);
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("2 backfill records, 1 windows recomputed");
        assertThat(topic.committed()).containsExactly(Map.entry(0, 3L));
        assertThat(t.batchRows())
                .containsExactly(
                        row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)),
                        row(W3, "c2", "ch1", MeasureValues.of(1, 0, 1, 90, 2)));
        assertThat(waiting()).containsExactly("0@0 never: not in the lake yet");
        assertThat(t.lastOut).contains("1 records pending", "the oldest since ");

        // Its file is restored to the lake: the next run settles it from the table and recomputes its window.
        t.lake.write(List.of(never));
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(waiting()).isEmpty();
        assertThat(t.lastOut)
                .contains("1 backfill records, 1 windows recomputed")
                .doesNotContain("pending");
        assertThat(t.batchRows()).contains(row(W2, "c1", "ch1", MeasureValues.of(0, 1, 0, 3, 1)));
    }

    @Test
    void aRunThatDiesBetweenItsResultsAndItsOffsetsLosesAndDoublesNothing() throws Exception {
        t.lake.write(List.of(A1, LATE1));
        List<Path> inProgress = t.lake.writeInProgress(List.of(LATE3));
        topic.send(0, LATE3, LATE1);

        // The broker refuses the run's offset commit (the group has an active member): its results and the record
        // left waiting are committed, its offsets are not, as when a run is killed between the two.
        try (var member = topic.joinedMember()) {
            assertThat(t.backfill("affected")).isEqualTo(ExitCode.FAILED.code());
        }
        assertThat(t.lastErr).contains("committed its results, but committing the backfill offsets failed");
        assertThat(topic.committed()).isEmpty();
        assertThat(waiting()).containsExactly("0@0 late3: not in the lake yet");
        assertThat(t.batchRows()).containsExactly(row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)));

        // The next run reads both records again, and LATE3 from the table too: it checks LATE3 once, keeps one row.
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("2 backfill records, 1 windows recomputed", "1 records pending");
        assertThat(waiting()).containsExactly("0@0 late3: not in the lake yet");
        assertThat(topic.committed()).containsExactly(Map.entry(0, 2L));

        t.lake.commit(inProgress);
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(waiting()).isEmpty();
        assertThat(t.batchRows())
                .containsExactly(
                        row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)),
                        row(W2, "c1", "ch1", MeasureValues.of(0, 1, 0, 7, 1)));
    }

    @Test
    void aWindowWhereTheStreamRanWithAnotherSizeWaitsAndStopsNoOtherWindow() throws Exception {
        // Stream rows of 2 minutes: one in W2 (where LATE3 falls), one between W2 and W3 (where no record falls).
        try (Connection c = t.admin()) {
            for (long start : List.of(W2, W2 + 2 * MINUTE)) {
                new StreamWindowMetricsTable(new SetTables(TestSets.defaultSet()))
                        .upsert(
                                c,
                                List.of(new StreamWindowMetricsTable.Row(
                                        new WindowRow(
                                                WindowKey.of(start, "c9", "ch1"),
                                                start + 2 * MINUTE,
                                                MeasureValues.of(1, 0, 0, 1, 1)),
                                        1)));
            }
        }
        t.lake.write(List.of(A1, LATE1, LATE3, C1, LATE2));
        topic.send(0, LATE1, LATE3, LATE2);

        assertThat(t.backfill("affected")).as(t.lastErr).isZero();

        // W1 and W3 are recomputed; only W2 waits, with why. It used to refuse the run (exit 3), every run.
        assertThat(t.lastOut).contains("3 backfill records, 2 windows recomputed", "1 records pending");
        assertThat(waiting())
                .singleElement()
                .asString()
                .startsWith("0@1 late3: stream_window_metrics holds rows of another window size");
        assertThat(t.batchRows())
                .containsExactly(
                        row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)),
                        row(W3, "c2", "ch1", MeasureValues.of(1, 0, 1, 90, 2)));
        assertThat(topic.committed()).containsExactly(Map.entry(0, 3L));
    }

    @Test
    void aBackfillTopicCreatedAgainOverAWaitingRecordFailsTheRunAndSaysWhatToDo() throws Exception {
        t.lake.write(List.of(A1, LATE1, C1, LATE2));
        t.lake.writeInProgress(List.of(LATE3));
        topic.send(0, LATE3);
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(waiting()).containsExactly("0@0 late3: not in the lake yet");

        // Kafka forgets the group's offsets with the topic: the next run reads the new topic from its start, where
        // offset 0 now holds another record. Checking either would lose the other.
        topic.recreate();
        topic.send(0, LATE2);
        assertThat(topic.committed()).isEmpty();

        assertThat(t.backfill("affected")).isEqualTo(ExitCode.FAILED.code());
        assertThat(t.lastErr)
                .contains(
                        "holds another record at " + t.backfillTopic + "-0@0",
                        "delete the topic's rows of backfill_waiting");
        assertThat(waiting()).containsExactly("0@0 late3: not in the lake yet");
        assertThat(topic.committed()).isEmpty();
    }

    @Test
    void groupOffsetsBeyondTheTopicsEndFailTheRunInsteadOfReadingNothing() throws Exception {
        t.lake.write(List.of(A1, LATE1));
        topic.send(0, LATE1);
        topic.commit(0, 5); // as after records were lost (an unclean leader election)

        assertThat(t.backfill("affected")).isEqualTo(ExitCode.FAILED.code());
        assertThat(t.lastErr)
                .contains("are beyond its end (partition 0: offset 5, end 1)", "--reset-offsets --to-offset");
        assertThat(t.batchRows()).isEmpty();
    }

    @Test
    void aRecordWhoseEventBreaksTheEventRulesIsSkippedAsMalformedAndStopsNothing() throws Exception {
        // The stream writes only valid events here; these are what a hand, a bug or a forger could write instead. The
        // first made every run fail (its window's end overflows), so `correct` stopped for good; the others named a
        // 1970 window or an id no lake can hold, and would wait for ever.
        t.lake.write(List.of(A1, LATE1));
        String good = BackfillTopic.recordFor(LATE1);
        topic.sendRaw(0, good.replace("\"event_ts\":" + LATE1.eventTs(), "\"event_ts\":9223372036854775807"));
        topic.sendRaw(0, good.replace("\"event_ts\":" + LATE1.eventTs(), "\"event_ts\":\"" + LATE1.eventTs() + "\""));
        topic.sendRaw(0, good.replace("\"event_id\":\"late1\"", "\"event_id\":\"late\\u0000\""));
        topic.sendRaw(0, good.replace("\"partition\":", "\"partition\":\"x\",\"was\":"));
        // Bytes that are not UTF-8 in its id: read as text with U+FFFD in place, it named an event no lake holds and
        // waited for ever. And an id given twice: which one would count is a guess.
        byte[] notUtf8 = good.getBytes(StandardCharsets.UTF_8);
        int at = good.indexOf("late1") + 3;
        notUtf8[at] = (byte) 0xC3;
        topic.sendRawBytes(0, notUtf8);
        topic.sendRaw(0, good.replace("\"event_id\":\"late1\"", "\"event_id\":\"late1\",\"event_id\":\"other\""));
        topic.send(0, LATE1);

        assertThat(t.backfill("affected")).as(t.lastErr).isZero();

        assertThat(t.lastOut)
                .contains("7 backfill records, 1 windows recomputed", "6 malformed records skipped")
                .doesNotContain("pending");
        assertThat(t.batchRows()).containsExactly(row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)));
        assertThat(waiting()).isEmpty();
        assertThat(topic.committed()).containsExactly(Map.entry(0, 7L));
        JsonNode skipped = new ObjectMapper().readTree(t.lastRun().details()).get("malformed_records");
        assertThat(skipped).hasSize(6);
        assertThat(skipped.get(4).get("offset").asLong()).isEqualTo(4);
        assertThat(skipped.get(4).get("reason").asText())
                .isEqualTo("not a backfill record: its value is not UTF-8 text");
        assertThat(skipped.get(5).get("reason").asText()).contains("Duplicate field 'event_id'");
    }

    @Test
    void offsetsStayUncommittedWhenTheWriteFails() throws Exception {
        t.lake.write(List.of(A1, LATE1));
        topic.send(0, LATE1);
        topic.sendRaw(1, "not a backfill record");
        try (Connection c = t.admin();
                Statement s = c.createStatement()) {
            s.execute("ALTER TABLE batch_window_metrics RENAME TO batch_window_metrics_away");
        }

        assertThat(t.backfill("affected")).isEqualTo(ExitCode.FAILED.code());

        assertThat(t.lastErr.strip().lines()).hasSize(1);
        assertThat(t.lastErr).startsWith("recount backfill affected: ").contains("batch_window_metrics");
        assertThat(topic.committed()).isEmpty();
        assertThat(t.lastRun().status()).isEqualTo(BatchRunsTable.Status.FAILED);
        assertThat(t.lastRun().error()).contains("batch_window_metrics");

        try (Connection c = t.admin();
                Statement s = c.createStatement()) {
            s.execute("ALTER TABLE batch_window_metrics_away RENAME TO batch_window_metrics");
        }
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        // The malformed record can never be recomputed: it is skipped, reported and acknowledged.
        assertThat(t.lastOut).contains("1 malformed records skipped");
        assertThat(topic.committed()).containsExactly(Map.entry(0, 1L), Map.entry(1, 1L));
        assertThat(t.batchRows()).containsExactly(row(W1, "c1", "ch1", MeasureValues.of(1, 1, 0, 30, 2)));
    }

    @Test
    void backfillRecordsDeletedBeforeTheyWereReadFailTheRunUntilSkippedDeliberately() throws Exception {
        t.lake.write(List.of(A1, LATE1, B1, LATE3, C1, LATE2));
        assertThat(t.backfill("range", "--from", "2026-11-28T10:00:00Z", "--to", "2026-11-28T10:06:00Z"))
                .isZero();
        List<WindowRow> recomputed = t.batchRows();
        topic.send(0, LATE1);
        assertThat(t.backfill("affected")).as(t.lastErr).isZero();
        assertThat(topic.committed()).containsEntry(0, 1L);

        // Retention deletes LATE3's record before the next run reads it; LATE2's is still there.
        topic.send(0, LATE3, LATE2);
        topic.deleteRecordsBefore(0, 2);

        assertThat(t.backfill("affected")).isEqualTo(ExitCode.FAILED.code());
        assertThat(t.lastErr.strip().lines()).hasSize(1);
        assertThat(t.lastErr)
                .contains("were deleted before `backfill affected` read them (partition 0: offsets 1 to 1)")
                .contains("--skip-deleted-input");
        assertThat(t.lastRun().status()).isEqualTo(BatchRunsTable.Status.FAILED);
        assertThat(topic.committed()).as("nothing acknowledged").containsEntry(0, 1L);
        assertThat(t.batchRows()).as("nothing recomputed").isEqualTo(recomputed);

        assertThat(t.backfill("affected", "--skip-deleted-input")).as(t.lastErr).isZero();
        assertThat(t.lastOut).contains("1 backfill records, 1 windows recomputed");
        assertThat(topic.committed()).containsEntry(0, 3L);
    }

    private List<String> waiting() throws Exception {
        return waiting(t);
    }

    /** backfill_waiting, as "partition@offset event: reason" in key order. */
    static List<String> waiting(BatchStack t) throws Exception {
        List<String> rows = new ArrayList<>();
        try (Connection c = t.admin();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT kafka_partition, kafka_offset, record, reason FROM " + t.schema
                        + ".backfill_waiting ORDER BY kafka_partition, kafka_offset")) {
            while (rs.next()) {
                String eventId = BackfillRecord.fromJson(rs.getString("record")).event().eventId;
                rows.add(rs.getInt(1) + "@" + rs.getLong(2) + " " + eventId + ": " + rs.getString("reason"));
            }
        }
        return rows;
    }

    static WindowRow row(long start, String campaign, String channel, MeasureValues m) {
        return new WindowRow(WindowKey.of(start, campaign, channel), start + MINUTE, m);
    }
}
