package dev.recount.stream;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.window.WindowAlignment;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.StreamWindowMetricsTable.Row;
import dev.recount.db.tables.WindowRow;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.runtime.executiongraph.ErrorInfo;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Input records deleted before the job read them (retention while the job was down): the start that would jump over
 * them is refused; when the start cannot see the gap (the broker expired the group's offsets too), the consumer finds
 * it and the job fails instead of skipping; only a start with --skip-deleted-input goes on, and then it counts every
 * record still on the topic exactly once, and nothing else.
 */
class DeletedInputITCase {
    @RegisterExtension
    static final FlinkCluster FLINK = new FlinkCluster(2);

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int PARTITIONS = 2;
    private static final Map<String, String> SETTINGS = Map.of(
            "window.size", "1m",
            "watermark.out-of-orderness", "5s",
            "window.allowed-lateness", "1m",
            "watermark.idleness", "1h",
            "stream.parallelism", "2");
    private static final WindowAlignment WINDOWS = new WindowAlignment(60_000);

    private final StreamTestStack stack = new StreamTestStack();
    /** Every event sent, by partition and offset (one record per event). */
    private final Map<TopicPartition, Map<Long, AdEvent>> sent = new HashMap<>();

    private String input;

    @Test
    void recordsDeletedBeforeTheJobReadThemAreNeverSkippedSilently(@TempDir Path home) throws Exception {
        input = stack.createTopic("deleted", PARTITIONS);
        StreamTestStack.Job job = stack.newJob(input, home, SETTINGS);
        TopicPartition p0 = new TopicPartition(input, 0);
        TopicPartition p1 = new TopicPartition(input, 1);
        String group = job.settings().consumerGroup();
        try (KafkaProducer<byte[], byte[]> producer = stack.producer();
                Admin admin = Admin.create(Map.<String, Object>of(
                        AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                        stack.stack().bootstrapServers()))) {
            produce(producer, 0, 80);
            RunningJob first = StreamRun.start(job.settings(), false, false, FLINK.environments(), line -> {});
            // Stopped as a user stops it (Ctrl-C: a savepoint) once a checkpoint holds every record so far.
            Poll.until(
                    WAIT,
                    "the group's offsets at the end of the input",
                    () -> committed(admin, group).equals(Map.of(p0, 80L, p1, 80L)));
            first.stopWithSavepoint().get(60, TimeUnit.SECONDS);
            assertThat(first.awaitEnd(WAIT)).isEqualTo(RunningJob.Outcome.STOPPED);
            List<Row> rowsBefore = stack.windowRows(job);

            // While it is down, more arrives, and retention deletes the first half of it on partition 0.
            produce(producer, 80, 160);
            admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(120)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
            for (long offset = 80; offset < 120; offset++) sent.get(p0).remove(offset);

            assertThatThrownBy(() -> StreamRun.start(job.settings(), false, false, FLINK.environments(), line -> {}))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("partition 0 resumes at offset 80, but its records before offset 120 were"
                            + " deleted (40 offsets)")
                    .hasMessageContaining("--skip-deleted-input")
                    .hasMessageNotContaining("partition 1");

            // The broker also forgot the group's offsets (they expire too): the start sees no gap, the consumer does.
            admin.deleteConsumerGroupOffsets(group, Set.of(p0, p1)).all().get(30, TimeUnit.SECONDS);
            RunningJob blind = StreamRun.start(job.settings(), false, false, FLINK.environments(), line -> {});
            ErrorInfo failure = Poll.untilPresent(
                    WAIT,
                    "the job to fail at the deleted records",
                    () -> java.util.Optional.ofNullable(FLINK.miniCluster()
                            .getExecutionGraph(blind.jobId())
                            .get()
                            .getFailureInfo()));
            assertThat(failure.getExceptionAsString()).contains("OffsetOutOfRangeException");
            blind.cancel().get(30, TimeUnit.SECONDS);
            assertThat(stack.windowRows(job)).as("no window fired meanwhile").isEqualTo(rowsBefore);

            List<String> log = new CopyOnWriteArrayList<>();
            RunningJob skipping = StreamRun.start(
                    job.settings(), new StreamRun.Reading(true, false, true), FLINK.environments(), log::add);
            assertThat(skipping.awaitEnd(WAIT)).isEqualTo(RunningJob.Outcome.FINISHED);
            assertThat(log).anyMatch(line -> line.startsWith("--skip-deleted-input: "));
        }

        assertThat(rows(job)).isEqualTo(expectedRows());
        List<String> lake = new ArrayList<>();
        for (LakeFiles.LakeRow r : LakeFiles.read(job.lake())) {
            lake.add(r.get(LakeLayout.KAFKA_PARTITION) + ":" + r.get(LakeLayout.KAFKA_OFFSET));
        }
        assertThat(lake).doesNotHaveDuplicates();
        assertThat(lake)
                .containsExactlyInAnyOrderElementsOf(sent.entrySet().stream()
                        .flatMap(p -> p.getValue().keySet().stream()
                                .map(o -> p.getKey().partition() + ":" + o))
                        .toList());
        assertThat(stack.readCommitted(job.settings().topics().backfill())).isEmpty();
        assertThat(stack.readCommitted(job.settings().topics().deadLetter())).isEmpty();
    }

    /** Positions [from, to) on every partition, one valid event each, 1.5 s of event time apart, in order. */
    private void produce(KafkaProducer<byte[], byte[]> producer, int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            for (int p = 0; p < PARTITIONS; p++) {
                String id = "e-" + p + "-" + i;
                long ts = ms(W0) + i * 1_500L;
                EventType type = i % 10 < 8 ? EventType.IMPRESSION : EventType.CLICK;
                AdEvent e = new AdEvent(
                        id, type, ts, "camp-" + i % 3, p == 0 ? "search" : "social", 1_000 + i, input, p, 0, ts + 500);
                long offset = producer.send(new ProducerRecord<>(
                                input,
                                p,
                                ts,
                                e.campaignId.getBytes(StandardCharsets.UTF_8),
                                EventJson.toJson(e).getBytes(StandardCharsets.UTF_8)))
                        .get(30, TimeUnit.SECONDS)
                        .offset();
                sent.computeIfAbsent(new TopicPartition(input, p), k -> new LinkedHashMap<>())
                        .put(offset, e);
            }
        }
    }

    private Map<TopicPartition, Long> committed(Admin admin, String group) throws Exception {
        return admin
                .listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS)
                .entrySet()
                .stream()
                .filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    }

    /** core's definitions applied to the events still on the topic. */
    private Map<WindowKey, WindowRow> expectedRows() {
        List<AdEvent> events = new ArrayList<>();
        sent.values().forEach(byId -> events.addAll(byId.values()));
        Map<WindowKey, WindowRow> rows = new HashMap<>();
        Fixtures.valuesPerWindow(Fixtures.DEFAULT_SET, events)
                .forEach((k, v) -> rows.put(k, new WindowRow(k, k.windowStartMillis() + 60_000, v)));
        return rows;
    }

    private Map<WindowKey, WindowRow> rows(StreamTestStack.Job job) throws Exception {
        Map<WindowKey, WindowRow> rows = new HashMap<>();
        for (Row r : stack.windowRows(job)) rows.put(r.window().key(), r.window());
        return rows;
    }
}
