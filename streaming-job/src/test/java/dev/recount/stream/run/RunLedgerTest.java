package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the next run starts, from what earlier runs left in the checkpoint directory. */
class RunLedgerTest {
    private static final String TOPIC = "ad-events";
    private static final long MINUTE = 60_000;
    private static final Map<String, Long> DEFAULT_WINDOW = Map.of("default", MINUTE);
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
    private static final Map<TopicPartition, Long> STOPS =
            Map.of(new TopicPartition(TOPIC, 0), 100L, new TopicPartition(TOPIC, 1), 7L);

    @TempDir
    Path dir;

    private RunLedger ledger;

    @BeforeEach
    void setUp() {
        ledger = new RunLedger(dir.toUri());
    }

    @Test
    void noRunsMeansTheEarliestOffsets() throws Exception {
        assertThat(ledger.plan(false, TOPIC, DEFAULT_WINDOW).kind()).isEqualTo(ResumePlan.Kind.FRESH);
    }

    @Test
    void resumesTheNewestSnapshotOfTheNewestRun() throws Exception {
        JobID old = run(1, unbounded());
        snapshot(old, "chk-9", 10);
        JobID newer = run(2, unbounded());
        snapshot(newer, "chk-3", 20);
        String savepoint = snapshot(newer, "savepoint-abc-123", 30);
        snapshot(newer, "chk-4", 25);

        ResumePlan plan = ledger.plan(false, TOPIC, DEFAULT_WINDOW);

        assertThat(plan.kind()).isEqualTo(ResumePlan.Kind.RESTORE);
        assertThat(plan.fromJob()).isEqualTo(newer);
        assertThat(plan.snapshot()).endsWith(savepoint);
    }

    @Test
    void aRunThatDiedBeforeItsFirstCheckpointIsSkipped() throws Exception {
        JobID withCheckpoint = run(1, unbounded());
        snapshot(withCheckpoint, "chk-2", 10);
        JobID died = run(2, unbounded());
        Files.createDirectories(jobDir(died).resolve("chk-1")); // in progress: no _metadata yet

        assertThat(ledger.plan(false, TOPIC, DEFAULT_WINDOW).fromJob()).isEqualTo(withCheckpoint);
    }

    @Test
    void anUnboundedRunCanBeFinishedWithBoundedAndAnInterruptedBoundedRunKeepsItsStops() throws Exception {
        JobID unbounded = run(1, unbounded());
        snapshot(unbounded, "chk-1", 10);
        assertThat(ledger.plan(true, TOPIC, DEFAULT_WINDOW).carriedStopOffsets())
                .isNull();

        JobID bounded = run(
                2, new RunRecord(2, TOPIC, DEFAULT_WINDOW, true, Long.MIN_VALUE, STOPS, false, Long.MIN_VALUE, "L"));
        snapshot(bounded, "chk-1", 20);

        ResumePlan plan = ledger.plan(true, TOPIC, DEFAULT_WINDOW);
        assertThat(plan.fromJob()).isEqualTo(bounded);
        assertThat(plan.carriedStopOffsets()).isEqualTo(STOPS);
        assertThatThrownBy(() -> ledger.plan(false, TOPIC, DEFAULT_WINDOW))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("--bounded");
    }

    @Test
    void afterAFinishedBoundedRunTheNextContinuesAtItsStopsWithItsWindowsClosed() throws Exception {
        JobID bounded = run(
                1, new RunRecord(1, TOPIC, DEFAULT_WINDOW, true, Long.MIN_VALUE, STOPS, false, Long.MIN_VALUE, "L"));
        snapshot(bounded, "chk-5", 10);
        ledger.recordFinished(bounded, T0.toEpochMilli());

        ResumePlan plan = ledger.plan(false, TOPIC, DEFAULT_WINDOW);

        assertThat(plan.kind()).isEqualTo(ResumePlan.Kind.CONTINUE_AFTER_BOUNDED);
        assertThat(plan.snapshot()).isNull();
        assertThat(plan.startOffsets()).isEqualTo(STOPS);
        assertThat(plan.closedUntil()).isEqualTo(T0.toEpochMilli());
    }

    @Test
    void refusesCheckpointsOfAnotherTopicOrWindowSize() throws Exception {
        snapshot(run(1, unbounded()), "chk-1", 10);

        assertThatThrownBy(() -> ledger.plan(false, "other-topic", DEFAULT_WINDOW))
                .hasMessageContaining("--from-earliest");
        assertThatThrownBy(() -> ledger.plan(false, TOPIC, Map.of("default", 5 * MINUTE)))
                .hasMessageContaining("--from-earliest");
    }

    @Test
    void refusesASetWhoseWindowChangedAndTakesSetsAddedOrRemoved() throws Exception {
        JobID job = run(
                1,
                new RunRecord(
                        0,
                        TOPIC,
                        Map.of("default", MINUTE, "campaign_slot", 5 * MINUTE),
                        false,
                        Long.MIN_VALUE,
                        null,
                        false,
                        Long.MIN_VALUE,
                        "L"));
        snapshot(job, "chk-1", 10);

        assertThatThrownBy(() -> ledger.plan(false, TOPIC, Map.of("default", MINUTE, "campaign_slot", MINUTE)))
                .hasMessageContaining("metric set campaign_slot")
                .hasMessageContaining("--from-earliest");
        assertThat(ledger.plan(false, TOPIC, Map.of("default", MINUTE, "channel_country", 2 * MINUTE))
                        .kind())
                .isEqualTo(ResumePlan.Kind.RESTORE);
    }

    /** A record of the release before metric sets has one window size: the default set's. */
    @Test
    void aRecordOfThePreviousReleaseIsTheDefaultSetsWindow() {
        RunRecord old = RunRecord.fromProperties("started-at=5\ninput-topic=" + TOPIC
                + "\nwindow-size-ms=60000\nmode=unbounded\nclosed-until=" + Long.MIN_VALUE + "\nfinished=false\n");
        assertThat(old.setWindowMillis()).isEqualTo(DEFAULT_WINDOW);

        RunRecord now = new RunRecord(
                7, TOPIC, Map.of("default", MINUTE, "b", 5 * MINUTE), false, 1, null, false, Long.MIN_VALUE, "L");
        String written = now.toProperties();
        assertThat(written).contains("window-size-ms=60000").contains("set-windows-ms=b\\=300000,default\\=60000");
        assertThat(RunRecord.fromProperties(written)).isEqualTo(now);
    }

    @Test
    void pruningKeepsOnlyTheNamedRunsAndDiscardForgetsAll() throws Exception {
        JobID a = run(1, unbounded());
        JobID b = run(2, unbounded());
        JobID c = run(3, unbounded());
        Files.createDirectories(dir.resolve("not-a-job"));

        ledger.pruneAllExcept(b, c);
        assertThat(ledger.runs()).extracting(RunLedger.Run::jobId).containsExactly(c, b);
        assertThat(jobDir(a)).doesNotExist();

        ledger.discardAll();
        assertThat(ledger.runs()).isEmpty();
        assertThat(dir.resolve("not-a-job")).exists();
    }

    private static RunRecord unbounded() {
        return new RunRecord(0, TOPIC, DEFAULT_WINDOW, false, Long.MIN_VALUE, null, false, Long.MIN_VALUE, "L");
    }

    private JobID run(long startedAt, RunRecord record) throws Exception {
        JobID id = JobID.generate();
        ledger.recordStart(
                id,
                new RunRecord(
                        startedAt,
                        record.inputTopic(),
                        record.setWindowMillis(),
                        record.bounded(),
                        record.closedUntil(),
                        record.stopOffsets(),
                        false,
                        Long.MIN_VALUE,
                        record.lineage()));
        return id;
    }

    /** A complete snapshot whose _metadata was written at T0 + {@code second} s. */
    private String snapshot(JobID job, String name, int second) throws Exception {
        Path metadata = jobDir(job).resolve(name).resolve("_metadata");
        Files.createDirectories(metadata.getParent());
        Files.writeString(metadata, "x");
        Files.setLastModifiedTime(metadata, FileTime.from(T0.plusSeconds(second)));
        return name;
    }

    private Path jobDir(JobID job) {
        return dir.resolve(job.toHexString());
    }
}
