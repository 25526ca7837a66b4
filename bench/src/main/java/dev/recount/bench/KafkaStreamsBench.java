package dev.recount.bench;

import dev.recount.bench.kstreams.RunProgress;
import dev.recount.bench.kstreams.UpsertWindowResults;
import dev.recount.bench.kstreams.WindowMetricsTopology;
import dev.recount.bench.kstreams.WindowResultsTable;
import dev.recount.core.config.Durations;
import dev.recount.core.config.EventTimeSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;

/**
 * (k) What a Kafka Streams user would write instead of the streaming job, for the same answer: the topology of
 * {@link WindowMetricsTopology} (core's EventValidator, de-duplication by event_id over recount's de-dup horizon,
 * {@code TimeWindows.ofSizeAndGrace(1 min, out-of-orderness + allowed lateness)}, core's MetricsAccumulator, batched
 * JDBC upserts into {@code <schema>.kstreams_window_metrics}), {@code processing.guarantee=exactly_once_v2}, one
 * stream thread per core (parallelism 2, as the Flink contenders), in-memory stores changelogged to Kafka.
 *
 * <p>Kafka Streams has no bounded mode, so the run ends as the Flink contenders' bounded runs end: when every record
 * of the topic, read from the earliest offset, has gone through every stage and every window result is upserted
 * ({@link RunProgress}); then the application closes, its state directory and internal topics are deleted.
 *
 * <p>Args: topic schema [threads] [commitInterval] [grace]; grace defaults to recount's out-of-orderness + allowed
 * lateness (see below); a longer grace lengthens the de-dup horizon with it. Why a replay of a preloaded topic needs a
 * grace as long as the topic's event-time span: stream time is per task, and behind a repartition a task's stream
 * time is the largest event time of all input partitions, so whatever partition is read slower looks late. With the
 * contract's 150 s, a replay of the benchmark's topic dropped 94 % of the events as too late. Connection settings
 * from local.env's variables. Prints
 * {@code RESULT kafka-streams <records> <seconds>} (seconds from start to the last upsert).
 */
public final class KafkaStreamsBench {
    private static final Duration RUN_DEADLINE = Duration.ofHours(1);
    private static final int UPSERT_BATCH_ROWS = 5_000;
    private static final Duration UPSERT_FLUSH_EVERY = Duration.ofMillis(200);

    public static void main(String[] args) throws Exception {
        String topic = args[0];
        String schema = args[1];
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        // As the Flink contenders' checkpoint interval: how often results become visible and state is made durable.
        Duration commitInterval = args.length > 3 ? Durations.parse(args[3]) : Duration.ofSeconds(10);
        String bootstrap = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
        String url = System.getenv("RECOUNT_JDBC_URL");
        String user = System.getenv("PGUSER");
        String password = System.getenv().getOrDefault("PGPASSWORD", "");
        long records = Topics.records(bootstrap, topic);
        EventTimeSettings time = EventTimeSettings.defaults();
        // Stream time is the largest event time seen; recount's watermark trails it by the out-of-orderness and then
        // allows the lateness, so this grace closes a window at the same point recount routes events as too late.
        Duration grace = args.length > 4
                ? Durations.parse(args[4])
                : time.outOfOrderness().plus(time.allowedLateness());

        try (Connection c = DriverManager.getConnection(url, user, password)) {
            WindowResultsTable.recreate(c, schema);
        }
        String applicationId = "bench-kstreams-" + schema.replace('_', '-');
        Path stateDir = Files.createTempDirectory("bench-kstreams-state");
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitInterval.toMillis());
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");

        RunProgress progress = new RunProgress(records);
        Topology topology = WindowMetricsTopology.build(
                topic,
                time,
                grace,
                progress,
                () -> new UpsertWindowResults(
                        url, user, password, schema, UPSERT_BATCH_ROWS, UPSERT_FLUSH_EVERY, progress));
        System.out.println("kafka-streams topology:\n" + topology.describe());

        AtomicInteger rebalancesWhileRunning = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        KafkaStreams streams = new KafkaStreams(topology, props);
        streams.setStateListener((now, before) -> {
            if (before == KafkaStreams.State.RUNNING && now == KafkaStreams.State.REBALANCING) {
                rebalancesWhileRunning.incrementAndGet();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            failure.compareAndSet(null, e);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });

        long t0 = System.nanoTime();
        streams.start();
        long deadline = t0 + RUN_DEADLINE.toNanos();
        while (!progress.drained()) {
            if (failure.get() != null)
                throw new IllegalStateException("the Kafka Streams application failed", failure.get());
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not done after " + RUN_DEADLINE + ": " + progress.summary());
            }
            if (progress.aggregationDone()) progress.requestDrain();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long tooLate = sumOf(streams.metrics(), "dropped-records-total");
        streams.close(Duration.ofMinutes(1));
        streams.cleanUp();
        deleteInternalTopics(bootstrap, applicationId);
        deleteRecursively(stateDir);

        long[] rowsAndEvents;
        try (Connection c = DriverManager.getConnection(url, user, password)) {
            rowsAndEvents = WindowResultsTable.rowsAndEvents(c, schema);
        }
        System.out.printf(
                Locale.ROOT,
                "kafka-streams: %d rows, %d events counted; %s; invalid %,d; too late (dropped by"
                        + " the windows) %,d; unique - too late - counted = %d; rebalances while running %d;"
                        + " exactly_once_v2, %d threads, commit every %s, grace %s, de-dup horizon %s%n",
                rowsAndEvents[0],
                rowsAndEvents[1],
                progress.summary(),
                progress.invalid(),
                tooLate,
                progress.unique() - tooLate - rowsAndEvents[1],
                rebalancesWhileRunning.get(),
                threads,
                Durations.format(commitInterval),
                Durations.format(grace),
                Durations.format(WindowMetricsTopology.dedupHorizon(time, grace)));
        System.out.printf(Locale.ROOT, "RESULT kafka-streams %d %.2f%n", records, seconds);
        System.exit(0);
    }

    /** A task-level metric summed over all tasks (Kafka Streams reports late drops per task). */
    private static long sumOf(Map<MetricName, ? extends Metric> metrics, String name) {
        double sum = 0;
        for (Map.Entry<MetricName, ? extends Metric> m : metrics.entrySet()) {
            if (m.getKey().name().equals(name)
                    && m.getKey().group().equals("stream-task-metrics")
                    && m.getValue().metricValue() instanceof Double d
                    && !d.isNaN()) {
                sum += d;
            }
        }
        return (long) sum;
    }

    /** Repartition and changelog topics: they hold a copy of the run's data, not needed once it is done. */
    private static void deleteInternalTopics(String bootstrap, String applicationId) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            List<String> internal = admin.listTopics().names().get().stream()
                    .filter(t -> t.startsWith(applicationId + "-"))
                    .toList();
            admin.deleteTopics(internal).all().get();
        }
    }

    private static void deleteRecursively(Path dir) throws Exception {
        if (!Files.exists(dir)) return;
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
