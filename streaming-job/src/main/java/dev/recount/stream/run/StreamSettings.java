package dev.recount.stream.run;

import dev.recount.core.config.AttributionSettings;
import dev.recount.core.config.Component;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.PasswordSource;
import dev.recount.core.config.PostgresSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.config.Topics;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The settings `stream` uses, read once from {@link RecountConfig} (defaults &lt; file &lt; environment &lt; flags).
 *
 * @param postgres         the stream's own login ({@code postgres.stream.user}) and schema
 * @param postgresPassword where that login's password comes from, not the password: the committer resolves it on the
 *                         TaskManager, so it is never part of the job graph
 * @param sets             the metric sets the job computes ({@code metric-sets.file}, else the built-in ones), each
 *                         with its window; {@code eventTime}'s window size is the default for sets that give none
 */
public record StreamSettings(
        EventTimeSettings eventTime,
        Topics topics,
        String bootstrapServers,
        PostgresSettings postgres,
        PasswordSource postgresPassword,
        int parallelism,
        Duration checkpointInterval,
        Duration checkpointTimeout,
        int retainedCheckpoints,
        Duration kafkaTransactionTimeout,
        URI checkpointDir,
        URI lakePath,
        int webUiPort,
        Restore restore,
        boolean checkpointOnWindowClose,
        AttributionSettings attribution,
        MetricSets sets) {

    /** Who decides where a start resumes ({@code stream.restore}). */
    public enum Restore {
        /** The job itself: the newest retained checkpoint or savepoint in stream.checkpoint-dir (RunLedger). */
        RECOUNT,
        /** The cluster: a savepoint or checkpoint the Flink Kubernetes Operator or {@code flink run -s} passes. */
        CLUSTER;

        static Restore parse(String value) {
            return switch (value.strip()) {
                case "recount" -> RECOUNT;
                case "cluster" -> CLUSTER;
                default ->
                    throw new IllegalArgumentException(
                            "stream.restore must be recount or cluster, got '" + value + "'");
            };
        }
    }

    /**
     * The job's one name: its name in Flink (the job_name label of its metrics, which deploy/monitoring's alerts
     * and dashboard select by), the stream_progress row it advances, and the prefix of its transactional ids.
     */
    public static final String JOB_NAME = "recount-stream";

    private static final Pattern URI_SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:/.*");

    public StreamSettings {
        if (parallelism < 1) throw new IllegalArgumentException("stream.parallelism must be >= 1, got " + parallelism);
        if (checkpointInterval.toMillis() < 10) {
            throw new IllegalArgumentException(
                    "stream.checkpoint-interval must be at least 10ms, got " + checkpointInterval);
        }
        if (retainedCheckpoints < 1) {
            throw new IllegalArgumentException("stream.retained-checkpoints must be >= 1, got " + retainedCheckpoints);
        }
        // The producers' transaction.timeout.ms is an int of milliseconds, and the broker refuses anything below 1 s
        // only when the first dead letter or too-late event opens a producer, hours into a run. Preflight compares
        // the upper end with the broker's transaction.max.timeout.ms.
        if (kafkaTransactionTimeout.toMillis() < 1_000 || kafkaTransactionTimeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("stream.kafka-transaction-timeout must be between 1s and "
                    + Integer.MAX_VALUE + " ms, got " + kafkaTransactionTimeout);
        }
        java.util.Objects.requireNonNull(attribution, "attribution");
        java.util.Objects.requireNonNull(sets, "sets");
        if (sets.sets().isEmpty()) throw new IllegalArgumentException(sets.source() + " defines no metric set");
        if (webUiPort < 0 || webUiPort > 65535)
            throw new IllegalArgumentException("stream.web-ui-port must be 0..65535, got " + webUiPort);
    }

    public static StreamSettings from(RecountConfig config) {
        return new StreamSettings(
                config.eventTime(),
                config.topics(),
                config.get("kafka.bootstrap-servers"),
                config.postgres(Component.STREAM),
                config.passwordSource(Component.STREAM),
                config.integer("stream.parallelism"),
                config.duration("stream.checkpoint-interval"),
                config.duration("stream.checkpoint-timeout"),
                config.integer("stream.retained-checkpoints"),
                config.duration("stream.kafka-transaction-timeout"),
                toUri(config.get("stream.checkpoint-dir")),
                toUri(config.get("lake.path")),
                config.integer("stream.web-ui-port"),
                Restore.parse(config.get("stream.restore")),
                parseBoolean(config.get("stream.checkpoint-on-window-close"), "stream.checkpoint-on-window-close"),
                config.attribution(),
                MetricSets.fromConfig(config));
    }

    /** Whether some set has attribution on: then the job joins clicks to impressions (for those sets). */
    public boolean attributing() {
        return sets.sets().stream().anyMatch(MetricSet::attribution);
    }

    /** Per set name, its window in milliseconds (what the run records and a restore must match). */
    public Map<String, Long> setWindowMillis() {
        Map<String, Long> windows = new TreeMap<>();
        for (MetricSet set : sets.sets()) windows.put(set.name(), set.window().toMillis());
        return windows;
    }

    private static boolean parseBoolean(String value, String key) {
        return switch (value.strip()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(key + " must be true or false, got '" + value + "'");
        };
    }

    /** A URI as given (s3a://, hdfs://, file:/...), or a local path made absolute. */
    static URI toUri(String pathOrUri) {
        if (URI_SCHEME.matcher(pathOrUri).matches()) return URI.create(pathOrUri);
        return Path.of(pathOrUri).toAbsolutePath().normalize().toUri();
    }

    /**
     * The transactional id and marker group of a side-output sink: unique per job (its PostgreSQL schema) and sink
     * across the Kafka cluster, and stable across restarts.
     */
    public String publicationId(String sink) {
        return JOB_NAME + "." + postgres.schema() + "." + topics.input() + "." + sink;
    }

    /** The consumer group the source commits offsets to (for lag monitoring only). */
    public String consumerGroup() {
        return JOB_NAME + "." + postgres.schema();
    }
}
