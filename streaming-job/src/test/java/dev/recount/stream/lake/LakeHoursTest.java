package dev.recount.stream.lake;

import static dev.recount.stream.Fixtures.W0;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.lake.LakeLayout;
import dev.recount.stream.Fixtures;
import dev.recount.stream.StreamJob;
import dev.recount.stream.StreamSinks;
import dev.recount.stream.sink.SetWindowRow;
import dev.recount.stream.source.DeadLetter;
import dev.recount.stream.testutils.CollectingSink;
import dev.recount.stream.testutils.InMemoryKafkaInput;
import dev.recount.stream.testutils.LakeFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Valid events spread over many lake hours cannot run the job out of heap. Any producer can send them: an event is
 * judged against its record timestamp, which the broker takes as sent (Kafka accepts any past one by default), and
 * within {@code validation.max-past} even an honest timestamp allows a week of hours. The sink keeps a file open per
 * hour until the next checkpoint; with a Parquet writer of ≈ 2.3 MB per open file, the 1,200 events below (one per
 * hour, all before the job's only checkpoint) needed ≈ 2.8 GB and failed this test's 2 GB heap.
 */
class LakeHoursTest {
    private static final int HOURS = 1_200;

    private final CollectingSink<SetWindowRow> rows = new CollectingSink<>("window-rows");
    private final CollectingSink<AdEvent> lakeLedger = new CollectingSink<>("lake-ledger");
    private final CollectingSink<DeadLetter> deadLetters = new CollectingSink<>("dead-letters");
    private final CollectingSink<BackfillRecord> backfill = new CollectingSink<>("backfill");

    @AfterEach
    void removeOutputs() {
        rows.close();
        lakeLedger.close();
        deadLetters.close();
        backfill.close();
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void oneEventInEachOfManyHoursIsArchivedWhole(@TempDir Path lake) throws Exception {
        List<InMemoryKafkaInput.Record> records = new ArrayList<>();
        long first = W0.toEpochMilli() - HOURS * LakeLayout.HOUR_MILLIS;
        for (int i = 0; i < HOURS; i++) {
            // Oldest first, each one hour after the last: every event is on time and opens an hour of its own.
            long eventTs = first + i * LakeLayout.HOUR_MILLIS;
            AdEvent e =
                    new AdEvent("h" + i, EventType.CLICK, eventTs, "camp", "chan", 1, Fixtures.TOPIC, 0, i, eventTs);
            records.add(new InMemoryKafkaInput.Record(
                    Fixtures.TOPIC, 0, i, eventTs, null, EventJson.toJson(e).getBytes(StandardCharsets.UTF_8)));
        }
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(16));
        conf.setString("restart-strategy.type", "none"); // an out-of-memory error fails the test, not a restart loop
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        // No checkpoint before the end of the input: every hour's file is open at once; the final one commits them.
        env.enableCheckpointing(Duration.ofHours(1).toMillis());
        StreamJob.build(
                env,
                InMemoryKafkaInput.source(records, new EventValidator(Fixtures.SETTINGS.validation())),
                new StreamSinks(rows, LakeSink.create(lake.toUri().toString()), lakeLedger, deadLetters, backfill),
                Fixtures.SETTINGS.withIdleness(Duration.ofHours(1)),
                Fixtures.DEFAULT_ONLY,
                Long.MIN_VALUE);
        env.execute("lake-hours-test");

        assertThat(deadLetters.collected()).isEmpty();
        SortedMap<Long, Long> byHour = LakeFiles.rowsByHour(lake);
        assertThat(byHour).hasSize(HOURS);
        assertThat(byHour.values()).allMatch(n -> n == 1L);
        assertThat(byHour.firstKey()).isEqualTo(first);
        assertThat(rows.collected()).hasSize(HOURS);
    }
}
