package dev.recount.stream;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.stream.metrics.JobTotals;
import dev.recount.stream.route.RouteInvalidRecords;
import dev.recount.stream.run.ResumePlan;
import dev.recount.stream.run.RunningJob;
import dev.recount.stream.run.StreamRun;
import dev.recount.stream.testutils.FlinkCluster;
import dev.recount.stream.testutils.LakeFiles;
import dev.recount.stream.testutils.StreamTestStack;
import dev.recount.testkit.Poll;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failures do not change the result. One run is hit twice (its TaskManager is killed, then it is cancelled) and
 * finished by a `--bounded` restart from its retained checkpoint; a reference run reads the same input without
 * failure. Their rows, dead letters and lake must be equal, and equal to what core's metric definitions give for
 * the unique events. Then a further `--bounded` run continues after the finished one.
 *
 * <p>The input has per-partition disorder below the out-of-orderness and no idle partitions, so no event is ever
 * late, whatever the interleaving of partitions: the expected result does not depend on timing.
 */
class StreamRecoveryITCase {
    @RegisterExtension
    static final FlinkCluster FLINK = new FlinkCluster(2);

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int PARTITIONS = 3;
    private static final long STEP_MS = 1_500;
    private static final Map<String, String> SETTINGS = Map.of(
            "window.size",
            "1m",
            "watermark.out-of-orderness",
            "5s",
            "window.allowed-lateness",
            "1m",
            "watermark.idleness",
            "1h",
            "stream.parallelism",
            "2");
    private static final WindowAlignment WINDOWS = new WindowAlignment(60_000);

    private final StreamTestStack stack = new StreamTestStack();
    /** Unique valid events by id: what the rows must add up to. */
    private final Map<String, AdEvent> unique = new LinkedHashMap<>();

    private final Set<String> validCoordinates = new HashSet<>();
    private int invalidSent;
    private String input;

    @Test
    void killedAndCancelledRunEndsLikeAnUndisturbedOne(@TempDir Path home) throws Exception {
        input = stack.createTopic("input", PARTITIONS);
        StreamTestStack.Job failing = stack.newJob(input, home.resolve("failing"), SETTINGS);
        try (KafkaProducer<byte[], byte[]> producer = stack.producer()) {
            // The input arrives while the job runs (paced over a few seconds), so both failures hit it mid-stream.
            RunningJob first = start(failing, false);
            CompletableFuture<Void> producing = CompletableFuture.runAsync(() -> produce(producer, 0, 800, 10));
            Poll.until(
                    WAIT,
                    "first windows committed",
                    () -> stack.windowRows(failing).size() >= 12);
            FLINK.killTaskManager();
            Poll.until(
                    WAIT,
                    "progress after the TaskManager restart",
                    () -> stack.windowRows(failing).size() >= 40);
            first.client().cancel().get(30, TimeUnit.SECONDS);
            producing.get(60, TimeUnit.SECONDS);

            RunningJob resumed = start(failing, true);
            assertThat(resumed.plan().kind()).isEqualTo(ResumePlan.Kind.RESTORE);
            assertThat(resumed.awaitEnd(WAIT)).isEqualTo(RunningJob.Outcome.FINISHED);

            StreamTestStack.Job reference = stack.newJob(input, home.resolve("reference"), SETTINGS);
            RunningJob undisturbed = start(reference, true);
            assertThat(undisturbed.plan().kind()).isEqualTo(ResumePlan.Kind.FRESH);
            assertThat(undisturbed.awaitEnd(WAIT)).isEqualTo(RunningJob.Outcome.FINISHED);

            Map<WindowKey, Row> expected = expectedRows();
            assertThat(rows(reference)).isEqualTo(expected);
            assertThat(rows(failing)).isEqualTo(expected);
            for (StreamTestStack.Job job : List.of(failing, reference)) {
                assertThat(stack.readCommitted(job.settings().topics().deadLetter()))
                        .hasSize(invalidSent);
                assertThat(stack.readCommitted(job.settings().topics().backfill()))
                        .isEmpty();
                assertLakeHoldsEveryValidRecordOnce(job);
            }

            // After a finished --bounded run, the next one goes on at its stopping offsets; the windows it flushed are
            // final, so an event for one of them goes to the backfill topic.
            produce(producer, 800, 840, Integer.MAX_VALUE);
            AdEvent closedWindowEvent =
                    send(producer, 0, "closed-window", W0.plusSeconds(30).toEpochMilli());
            unique.remove(closedWindowEvent.eventId);
            RunningJob continued = start(failing, true);
            assertThat(continued.plan().kind()).isEqualTo(ResumePlan.Kind.CONTINUE_AFTER_BOUNDED);
            assertThat(continued.awaitEnd(WAIT)).isEqualTo(RunningJob.Outcome.FINISHED);

            assertThat(rows(failing)).isEqualTo(expectedRows());
            List<BackfillRecord> backfill = stack
                    .readCommitted(failing.settings().topics().backfill())
                    .stream()
                    .map(r -> BackfillRecord.fromJson(new String(r.value(), StandardCharsets.UTF_8)))
                    .toList();
            assertThat(backfill).extracting(b -> b.event().eventId).containsExactly("closed-window");
            assertLakeHoldsEveryValidRecordOnce(failing);
        }
    }

    /**
     * {@code stream.restore=cluster} (Kubernetes): the job resumes from exactly the snapshot the cluster passes —
     * here set as {@code execution.state-recovery.path}, as the Flink Kubernetes Operator does — and from the
     * earliest offsets when it passes none, never from a checkpoint it finds itself.
     */
    @Test
    void underClusterRestoreTheJobResumesFromWhatTheClusterPassesAndNothingElse(@TempDir Path home) throws Exception {
        input = stack.createTopic("cluster", PARTITIONS);
        Map<String, String> settings = new HashMap<>(SETTINGS);
        settings.put("stream.restore", "cluster");
        StreamTestStack.Job job = stack.newJob(input, home, settings);
        assertThatThrownBy(() -> StreamRun.start(job.settings(), true, false, FLINK.environments(), line -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stream.restore=recount");

        try (KafkaProducer<byte[], byte[]> producer = stack.producer()) {
            produce(producer, 0, 100, Integer.MAX_VALUE);
            long before = validSent();
            RunningJob first = StreamRun.start(job.settings(), false, false, FLINK.environments(), line -> {});
            assertThat(first.plan().kind()).isEqualTo(ResumePlan.Kind.CLUSTER_DECIDES);
            Poll.until(WAIT, "the first run to read all " + before + " valid records", () -> valid(first) == before);
            String savepoint = first.stopWithSavepoint().get(60, TimeUnit.SECONDS);
            assertThat(first.awaitEnd(WAIT)).isEqualTo(RunningJob.Outcome.STOPPED);

            produce(producer, 100, 160, Integer.MAX_VALUE);
            long after = validSent() - before;
            long w2 = ms(W0) + 120_000; // positions 80-119: opened by the first run, fired only by the restored one
            RunningJob restored = StreamRun.start(job.settings(), false, false, restoringFrom(savepoint), line -> {});
            Poll.until(
                    WAIT,
                    "the restored run to fire window " + w2,
                    () -> rows(job).keySet().stream().anyMatch(k -> k.windowStartMillis() == w2));
            // Firing w2 took every partition past position 123. Read from the earliest offsets, that would have
            // meant reading (and counting) all the old records first.
            assertThat(valid(restored)).as("records read by the restored run").isLessThanOrEqualTo(after);
            Map<WindowKey, Row> expected = expectedRows();
            assertThat(rows(job))
                    .as("w2 holds the old events from the restored window state and the new ones")
                    .isEqualTo(expected.entrySet().stream()
                            .filter(e -> e.getKey().windowStartMillis() <= w2)
                            .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
            Poll.until(WAIT, "the restored run to read the " + after + " new records", () -> valid(restored) == after);
            restored.client().cancel().get(30, TimeUnit.SECONDS);

            // No snapshot passed: a fresh start, although the previous runs' checkpoints are in the directory.
            RunningJob fresh = StreamRun.start(job.settings(), false, false, FLINK.environments(), line -> {});
            Poll.until(
                    WAIT,
                    "a fresh start to read all " + (before + after) + " valid records from the earliest offsets",
                    () -> valid(fresh) == before + after);
            fresh.client().cancel().get(30, TimeUnit.SECONDS);
        }
    }

    /** As the cluster would pass a savepoint: in the configuration the job's environment is created with. */
    private static StreamRun.Environments restoringFrom(String savepoint) {
        return conf -> {
            Configuration withSavepoint = new Configuration(conf);
            withSavepoint.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
            return FLINK.environments().create(withSavepoint);
        };
    }

    private static long valid(RunningJob job) {
        return JobTotals.get(job.totals(), RouteInvalidRecords.VALID_EVENTS_METRIC);
    }

    private long validSent() {
        synchronized (validCoordinates) {
            return validCoordinates.size();
        }
    }

    private RunningJob start(StreamTestStack.Job job, boolean bounded) throws Exception {
        return StreamRun.start(job.settings(), bounded, false, FLINK.environments(), line -> {});
    }

    /**
     * Positions [from, to) on every partition, in lockstep: event time moves on 1.5 s per position, with up to 1.4 s
     * of disorder. Every 19th position is re-sent on the next partition (a duplicate), every 23rd is followed by an
     * invalid record. At most {@code perTenthSecond} positions go out per 100 ms (pacing the load, not waiting for
     * anything).
     */
    private void produce(KafkaProducer<byte[], byte[]> producer, int from, int to, int perTenthSecond) {
        for (int i = from; i < to; i++) {
            if (i > from && (i - from) % perTenthSecond == 0) {
                producer.flush();
                LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
            }
            for (int p = 0; p < PARTITIONS; p++) {
                long ts = ms(W0) + i * STEP_MS + (i % 3) * 700L;
                AdEvent e = send(producer, p, "e-" + p + "-" + i, ts);
                if (i % 19 == 0)
                    sendRaw(
                            producer,
                            (p + 1) % PARTITIONS,
                            e,
                            EventJson.toJson(e).getBytes(StandardCharsets.UTF_8),
                            true);
                if (i % 23 == 0) {
                    sendRaw(producer, p, e, ("{\"event_id\": \"broken-" + i).getBytes(StandardCharsets.UTF_8), false);
                    invalidSent++;
                }
            }
        }
        producer.flush();
    }

    private AdEvent send(KafkaProducer<byte[], byte[]> producer, int partition, String id, long ts) {
        int n = Math.abs(id.hashCode());
        EventType type = n % 10 < 7 ? EventType.IMPRESSION : n % 10 < 9 ? EventType.CLICK : EventType.CONVERSION;
        long cost = switch (type) {
            case IMPRESSION -> 1_000;
            case CLICK -> 200_000 + n % 1000;
            case CONVERSION -> 3_000_000;
        };
        AdEvent e = new AdEvent(
                id, type, ts, "camp-" + n % 3, n % 2 == 0 ? "search" : "social", cost, input, partition, 0, ts + 1_000);
        unique.put(id, e);
        sendRaw(producer, partition, e, EventJson.toJson(e).getBytes(StandardCharsets.UTF_8), true);
        return e;
    }

    private void sendRaw(
            KafkaProducer<byte[], byte[]> producer, int partition, AdEvent e, byte[] value, boolean valid) {
        producer.send(
                new ProducerRecord<>(
                        input, partition, e.recordTs, e.campaignId.getBytes(StandardCharsets.UTF_8), value),
                (metadata, error) -> {
                    if (error == null && valid) {
                        synchronized (validCoordinates) {
                            validCoordinates.add(metadata.partition() + ":" + metadata.offset());
                        }
                    }
                });
    }

    /** core's definitions applied to the unique events. */
    private Map<WindowKey, Row> expectedRows() {
        Map<WindowKey, Row> rows = new TreeMap<>(java.util.Comparator.comparing(WindowKey::toString));
        Fixtures.valuesPerWindow(Fixtures.DEFAULT_SET, unique.values())
                .forEach((k, v) -> rows.put(
                        k, new Row(new dev.recount.db.tables.WindowRow(k, k.windowStartMillis() + 60_000, v), 1)));
        return rows;
    }

    private Map<WindowKey, Row> rows(StreamTestStack.Job job) throws Exception {
        Map<WindowKey, Row> rows = new TreeMap<>(java.util.Comparator.comparing(WindowKey::toString));
        for (Row r : stack.windowRows(job)) rows.put(r.window().key(), r);
        return rows;
    }

    private void assertLakeHoldsEveryValidRecordOnce(StreamTestStack.Job job) throws Exception {
        List<String> coordinates = new ArrayList<>();
        for (LakeFiles.LakeRow r : LakeFiles.read(job.lake())) {
            coordinates.add(r.get(LakeLayout.KAFKA_PARTITION) + ":" + r.get(LakeLayout.KAFKA_OFFSET));
        }
        assertThat(coordinates).doesNotHaveDuplicates();
        synchronized (validCoordinates) {
            assertThat(new HashSet<>(coordinates)).isEqualTo(validCoordinates);
        }
        // What the job recorded as archived, per hour, is what the lake holds: no more (counts of a checkpoint that
        // failed) and no fewer (a commit lost with the TaskManager).
        assertThat(stack.lakeArchivedRows(job))
                .as("lake_archived_rows against the lake's files")
                .isEqualTo(LakeFiles.rowsByHour(job.lake()));
    }
}
