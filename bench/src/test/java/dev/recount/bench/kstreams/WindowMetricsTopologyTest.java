package dev.recount.bench.kstreams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.bench.DefaultSet;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.sets.MeasureSums;
import dev.recount.core.sets.MeasureValues;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Kafka Streams peer's answer on a handful of events: validity, first copy wins, grace, too late. */
class WindowMetricsTopologyTest {
    private static final String TOPIC = "events";
    private static final Instant T0 = Instant.parse("2026-11-29T00:00:00Z");
    private static final EventTimeSettings TIME = EventTimeSettings.defaults();
    private static final Duration GRACE = TIME.outOfOrderness().plus(TIME.allowedLateness());

    @TempDir
    Path stateDir;
    /** Latest result per "window_start campaign channel", as the upsert table would hold it. */
    private final Map<String, MeasureValues> table = new HashMap<>();

    private RunProgress progress;
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> input;

    @BeforeEach
    void start() {
        progress = new RunProgress(0);
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "window-metrics-topology-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        driver = new TopologyTestDriver(
                WindowMetricsTopology.build(TOPIC, TIME, GRACE, progress, () -> new Capture(table)), props, T0);
        input = driver.createInputTopic(TOPIC, new ByteArraySerializer(), new ByteArraySerializer());
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    @Test
    void countsEachIdOnceAndTakesLateEventsWithinTheGraceOnly() {
        send("e1", "impression", 10, 100);
        send("e1", "impression", 10, 100); // a duplicate send: dropped
        send("e2", "click", 20, 50);
        input.pipeInput(null, "{not json".getBytes(StandardCharsets.UTF_8), T0.plusSeconds(21));
        send("e3", "impression", 70, 7);
        send("e4", "impression", 180, 1); // stream time 3:00: the first window takes events until 3:30
        send("e5", "conversion", 30, 1000); // late, within the grace: counted
        send("e6", "impression", 240, 1); // stream time 4:00: the first window is closed
        send("e7", "impression", 40, 9); // too late: dropped

        assertThat(table.get(key(0))).isEqualTo(MeasureValues.of(1, 1, 1, 1150, 3));
        assertThat(table.get(key(60))).isEqualTo(MeasureValues.of(1, 0, 0, 7, 1));
        assertThat(table.get(key(180))).isEqualTo(MeasureValues.of(1, 0, 0, 1, 1));
        assertThat(progress.invalid()).isEqualTo(1);
        assertThat(progress.summary()).contains("duplicates dropped 1,");
    }

    @Test
    void aCopyAfterTheHorizonIsTooLateForItsWindowAnyway() {
        send("e1", "impression", 10, 100);
        send("e2", "impression", 10 + TIME.dedupHorizon().toSeconds() + 60, 1);
        send("e1", "impression", 10, 100); // id forgotten, but its window closed long ago: not counted again

        assertThat(table.get(key(0))).isEqualTo(MeasureValues.of(1, 0, 0, 100, 1));
    }

    private void send(String id, String type, long secondsAfterT0, long costMicros) {
        Instant ts = T0.plusSeconds(secondsAfterT0);
        String json = "{\"event_id\":\"" + id + "\",\"event_type\":\"" + type + "\",\"event_ts\":" + ts.toEpochMilli()
                + ",\"campaign_id\":\"c1\",\"channel_id\":\"web\",\"cost_micros\":" + costMicros + "}";
        input.pipeInput("c1".getBytes(StandardCharsets.UTF_8), json.getBytes(StandardCharsets.UTF_8), ts);
    }

    private static String key(long windowStartSecondsAfterT0) {
        return T0.plusSeconds(windowStartSecondsAfterT0).toEpochMilli() + " c1 web";
    }

    /** Stands in for the PostgreSQL upsert: the latest result per window key. */
    private record Capture(Map<String, MeasureValues> table)
            implements Processor<Windowed<String>, MeasureSums, Void, Void> {
        @Override
        public void process(Record<Windowed<String>, MeasureSums> result) {
            Windowed<String> k = result.key();
            table.put(
                    k.window().start() + " " + CampaignChannel.campaign(k.key()) + " "
                            + CampaignChannel.channel(k.key()),
                    DefaultSet.SET.values(result.value()));
        }
    }
}
