package dev.recount.stream.run;

import dev.recount.core.config.Durations;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.Database;
import dev.recount.db.Role;
import dev.recount.db.sets.MetricSetRegistry;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.db.tables.WindowSizes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.AuthorizationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, before a job is submitted, what would otherwise only show up as a failing-and-restarting job, or not at
 * all: the three topics exist and none is compacted, and PostgreSQL lets the stream's own login in, with its group
 * role's privileges and recount's tables in the configured schema — every metric set migrated as the definitions
 * declare it (db's registry), its stream table (and attribution table, for a set with attribution) there, holding no
 * rows of another window size than its set's. Each failure is one line.
 *
 * <p>{@link #checkAndRead} runs Kafka's side on another thread while PostgreSQL's runs on the caller's (each is mostly
 * waiting for its client to load and connect, ~0.3–0.7 s together at start-up), and reads what the run needs from each
 * with the same clients: the input topic's offsets (where a --bounded run stops, and where {@link DeletedInput} looks
 * for records deleted before the job read them) and what the job committed last. It returns only when
 * both sides passed; when both failed, Kafka's failure is the one reported, as when they ran one after the other.
 */
final class Preflight {
    private static final Logger LOG = LoggerFactory.getLogger(Preflight.class);

    private Preflight() {}

    /** What the start of a run reads while checking. */
    record Checked(Optional<StreamProgressTable.Committed> committed, InputOffsets input) {}

    /**
     * The input topic's offsets per partition when the run starts.
     *
     * @param group what the job's consumer group committed (the position of a recent checkpoint)
     */
    record InputOffsets(
            Map<TopicPartition, Long> earliest, Map<TopicPartition, Long> latest, Map<TopicPartition, Long> group) {}

    static void check(StreamSettings s) {
        checkTopics(s, false);
        checkPostgres(s, false);
    }

    /** Checks Kafka and PostgreSQL (as {@link #check}) and reads what the job committed last and the input's offsets. */
    static Checked checkAndRead(StreamSettings s) {
        CompletableFuture<InputOffsets> kafka = CompletableFuture.supplyAsync(() -> checkTopics(s, true), task -> {
            Thread kafkaSide = new Thread(task, "preflight-kafka");
            kafkaSide.setDaemon(true);
            kafkaSide.start();
        });

        Optional<StreamProgressTable.Committed> committed = null;
        RuntimeException postgresFailure = null;
        try {
            committed = checkPostgres(s, true);
        } catch (RuntimeException e) {
            postgresFailure = e;
        }
        InputOffsets offsets;
        try {
            offsets = kafka.join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            if (e.getCause() instanceof Error err) throw err;
            throw e;
        }
        if (postgresFailure != null) throw postgresFailure;
        return new Checked(committed, offsets);
    }

    /**
     * Fails unless the three topics exist; then, if {@code readOffsets}, returns the input's offsets read with the same
     * client (else null).
     */
    private static InputOffsets checkTopics(StreamSettings s, boolean readOffsets) {
        Properties p = new Properties();
        p.setProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrapServers());
        p.setProperty(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.setProperty(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        try (Admin admin = Admin.create(p)) {
            Set<String> existing = admin.listTopics().names().get(15, TimeUnit.SECONDS);
            List<String> missing = new ArrayList<>();
            for (String t : List.of(
                    s.topics().input(), s.topics().deadLetter(), s.topics().backfill())) {
                if (!existing.contains(t)) missing.add(t);
            }
            if (!missing.isEmpty()) {
                throw new IllegalStateException("Kafka at " + s.bootstrapServers() + " has no topic "
                        + String.join(", ", missing) + " (`./recount up` creates them)");
            }
            Optional<Map<ConfigResource, Config>> topicConfigs = describeUnlessForbidden(
                    admin, topicResources(s), "that the topics are not compacted and their timestamps bounded");
            if (topicConfigs.isPresent()) {
                refuseCompacted(topicConfigs.get());
                Config input = topicConfigs
                        .get()
                        .get(new ConfigResource(
                                ConfigResource.Type.TOPIC, s.topics().input()));
                futureTimestampsAccepted(s.topics().input(), input).ifPresent(LOG::warn);
            }
            refuseTransactionTimeoutAboveBrokers(admin, s);
            if (!readOffsets) return null;
            String input = s.topics().input();
            List<TopicPartition> partitions = KafkaOffsets.partitions(admin, s.bootstrapServers(), input);
            return new InputOffsets(
                    KafkaOffsets.earliest(admin, s.bootstrapServers(), partitions),
                    KafkaOffsets.latest(admin, s.bootstrapServers(), partitions),
                    KafkaOffsets.committed(admin, s.bootstrapServers(), s.consumerGroup(), input));
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot reach Kafka at " + s.bootstrapServers() + " (is the stack up?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * Fails if stream.kafka-transaction-timeout exceeds what the broker allows (transaction.max.timeout.ms, 15 min by
     * default). The broker refuses such a producer only when it first starts a transaction, at the first checkpoint
     * with a dead letter or a too-late event, and the job would then fail over on that checkpoint forever.
     */
    private static void refuseTransactionTimeoutAboveBrokers(Admin admin, StreamSettings s)
            throws ExecutionException, InterruptedException, TimeoutException {
        String name = "transaction.max.timeout.ms";
        String broker = String.valueOf(admin.describeCluster()
                .nodes()
                .get(15, TimeUnit.SECONDS)
                .iterator()
                .next()
                .id());
        ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER, broker);
        Optional<Map<ConfigResource, Config>> configs = describeUnlessForbidden(
                admin, List.of(resource), "stream.kafka-transaction-timeout against the broker");
        if (configs.isEmpty()) return;
        ConfigEntry max = configs.get().get(resource).get(name);
        if (max == null || max.value() == null) return;
        long brokerMillis = Long.parseLong(max.value());
        long millis = s.kafkaTransactionTimeout().toMillis();
        if (millis > brokerMillis) {
            throw new IllegalStateException("stream.kafka-transaction-timeout "
                    + Durations.format(s.kafkaTransactionTimeout()) + " exceeds the broker's " + name + " ("
                    + brokerMillis + " ms): the job could never publish a dead letter or a too-late event; set it"
                    + " at most that");
        }
    }

    /**
     * The configurations of {@code resources}, or empty, with a warning naming {@code check}, on a cluster whose ACLs
     * do not let the job describe them: the job itself needs no more than to read and write its topics, so the start
     * goes on unchecked.
     */
    private static Optional<Map<ConfigResource, Config>> describeUnlessForbidden(
            Admin admin, List<ConfigResource> resources, String check)
            throws ExecutionException, InterruptedException, TimeoutException {
        try {
            return Optional.of(admin.describeConfigs(resources).all().get(15, TimeUnit.SECONDS));
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof AuthorizationException)) throw e;
            LOG.warn("cannot check {}: {}", check, e.getCause().getMessage());
            return Optional.empty();
        }
    }

    private static List<ConfigResource> topicResources(StreamSettings s) {
        List<ConfigResource> topics = new ArrayList<>();
        for (String t :
                List.of(s.topics().input(), s.topics().deadLetter(), s.topics().backfill())) {
            topics.add(new ConfigResource(ConfigResource.Type.TOPIC, t));
        }
        return topics;
    }

    /** How far ahead of the broker's clock a producer's record timestamp may be before it is worth a warning. */
    static final long FUTURE_TIMESTAMPS_TOLERATED_MS = 3_600_000;

    /** The setting that bounded future timestamps before Kafka 3.6 (and, left unbounded, until 4.0 removed it). */
    static final String TIMESTAMP_DIFFERENCE_MAX_MS = "message.timestamp.difference.max.ms";

    /**
     * A warning where the input topic takes record timestamps that producers set ({@code CreateTime}) more than an
     * hour ahead of the broker's clock. Validation, the watermark and lateness judge events against record
     * timestamps, so a hostile or broken producer could put events in windows that far ahead: each such window waits
     * in the job's state until the watermark gets there, and a flood of them grows the state without bound. Only a
     * warning: the job cannot set the topic, and refusing to start would stop a working pipeline over a producer that
     * behaves.
     *
     * <p>Which setting bounds it: {@code message.timestamp.after.max.ms} (Kafka 3.6+; 4.0's default is an hour), and
     * where that is unbounded (3.6–3.9's default) or missing (before 3.6), the older
     * {@value #TIMESTAMP_DIFFERENCE_MAX_MS}, unbounded by default.
     */
    static Optional<String> futureTimestampsAccepted(String topic, Config config) {
        if (config == null) return Optional.empty();
        ConfigEntry type = config.get(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG);
        if (type != null && "LogAppendTime".equals(type.value())) return Optional.empty();
        ConfigEntry after = config.get(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG);
        ConfigEntry difference = config.get(TIMESTAMP_DIFFERENCE_MAX_MS);
        long afterMillis = millis(after);
        long millis = afterMillis == Long.MAX_VALUE ? millis(difference) : afterMillis;
        if (millis <= FUTURE_TIMESTAMPS_TOLERATED_MS) return Optional.empty();
        ConfigEntry shown = after != null && after.value() != null ? after : difference;
        String setting = shown != null ? shown.name() : TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG;
        String ahead = millis == Long.MAX_VALUE
                ? "any time ahead of the broker's clock"
                : "up to " + Durations.format(java.time.Duration.ofMillis(millis)) + " ahead of the broker's clock";
        return Optional.of("Kafka topic " + topic + " takes record timestamps that producers set ("
                + TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG + "=CreateTime) " + ahead + " (" + setting + "="
                + (shown == null ? "unset" : shown.value()) + "): the job judges events against them, so a producer can"
                + " put events in windows that far ahead, which wait in the job's state until then; set " + setting
                + " to at most " + FUTURE_TIMESTAMPS_TOLERATED_MS + " or " + TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG
                + "=LogAppendTime (docs/operations.md, \"Record timestamps are the producer's word\")");
    }

    private static long millis(ConfigEntry e) {
        return e == null || e.value() == null ? Long.MAX_VALUE : Long.parseLong(e.value());
    }

    /**
     * Fails if any of the three topics is compacted: compaction keeps only the last record per key (the input's key
     * is the producer's, often the campaign), so events the job has not read yet, too-late events `backfill affected`
     * has not read, or dead letters would vanish without anyone deleting them, and nothing could count them.
     */
    private static void refuseCompacted(Map<ConfigResource, Config> configs) {
        List<String> compacted = new ArrayList<>();
        configs.forEach((topic, config) -> {
            ConfigEntry policy = config.get(TopicConfig.CLEANUP_POLICY_CONFIG);
            if (policy != null
                    && policy.value() != null
                    && policy.value().contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
                compacted.add(topic.name() + " (" + TopicConfig.CLEANUP_POLICY_CONFIG + "=" + policy.value() + ")");
            }
        });
        if (!compacted.isEmpty()) {
            compacted.sort(null);
            throw new IllegalStateException("Kafka topic " + String.join(", ", compacted) + " is compacted: compaction"
                    + " keeps only the last record per key, so records would vanish before they are counted; set "
                    + TopicConfig.CLEANUP_POLICY_CONFIG + "=" + TopicConfig.CLEANUP_POLICY_DELETE + " (with a retention"
                    + " longer than any outage)");
        }
    }

    /**
     * Fails if a set's stream rows were written with another window size than the set's. A run of the new size would
     * add windows that overlap the old ones (a replay with --from-earliest rewrites the same hours), the serving view
     * would count their events twice, and backfill and reconcile would refuse those days until someone deleted rows by
     * hand. Whatever the checkpoints say: with stream.restore=cluster nothing else compares the sizes.
     */
    private static void refuseAnotherWindowSize(Connection c, StreamSettings s, MetricSet set) throws SQLException {
        c.setSchema(s.postgres().schema());
        long size = set.window().toMillis();
        Optional<String> why = WindowSizes.atEndsOtherThan(c, new SetTables(set).streamWindowMetrics(), size);
        if (why.isPresent()) {
            throw new IllegalStateException("PostgreSQL schema '" + s.postgres().schema() + "': " + why.get()
                    + "; the stream ran there with another window for metric set " + set.name() + ", and windows of"
                    + " two sizes in one schema count their events twice. Run with the size the schema holds, or run"
                    + " the new size in a fresh schema (postgres.schema) with --from-earliest");
        }
    }

    /** Fails unless {@code table} exists in the configured schema; {@code creates} says what makes it. */
    private static void requireTable(PreparedStatement ps, StreamSettings s, String table, String creates)
            throws SQLException {
        ps.setString(1, s.postgres().schema() + "." + table);
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (rs.getString(1) == null) {
                throw new IllegalStateException("PostgreSQL schema '"
                        + s.postgres().schema() + "' has no " + table + " table (" + creates + ")");
            }
        }
    }

    /** What the job committed last (see RestoreGuard), if it ever committed; read through {@code c}. */
    private static Optional<StreamProgressTable.Committed> committed(Connection c, StreamSettings s) {
        try {
            c.setSchema(s.postgres().schema());
            return StreamProgressTable.committed(c, StreamSettings.JOB_NAME);
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "cannot read stream_progress at " + s.postgres().jdbcUrl() + ": " + e.getMessage(), e);
        }
    }

    /** Logs in as the committer will: the stream's own login, the password resolved here. */
    private static Connection connect(StreamSettings s) {
        Properties p = new Properties();
        p.setProperty("user", s.postgres().user());
        String password = s.postgresPassword().resolve();
        if (password != null) p.setProperty("password", password);
        p.setProperty("connectTimeout", "10");
        p.setProperty("socketTimeout", "30");
        try {
            return DriverManager.getConnection(s.postgres().jdbcUrl(), p);
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "cannot log in to PostgreSQL at " + s.postgres().jdbcUrl() + " as "
                            + s.postgres().user() + " (password from " + s.postgresPassword() + "): " + e.getMessage(),
                    e);
        }
    }

    /**
     * Logs in as the committer will and checks its privileges and the tables; then, if {@code readCommitted}, reads
     * what the job committed last over the same connection (else returns null).
     */
    private static Optional<StreamProgressTable.Committed> checkPostgres(StreamSettings s, boolean readCommitted) {
        Connection c = connect(s);
        try (c;
                PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)")) {
            Database.checkLogin(c, s.postgres().schema(), Role.STREAM);
            // Every set migrated as the definitions declare it (its fingerprint): rows and state of a set whose
            // dimensions or measures changed in place would mean two things at once.
            c.setSchema(s.postgres().schema());
            MetricSetRegistry.check(c, s.sets());
            for (MetricSet set : s.sets().sets()) {
                SetTables tables = new SetTables(set);
                // The default set's tables are migrations'; every other set's are made from the definitions.
                String creates = set.isDefault()
                        ? "`./recount up` applies the migrations"
                        : "`./recount migrate` creates the tables of metric set " + set.name();
                requireTable(ps, s, tables.streamWindowMetrics(), creates);
                if (set.attribution()) requireTable(ps, s, tables.streamAttributionMetrics(), creates);
                refuseAnotherWindowSize(c, s, set);
            }
            return readCommitted ? committed(c, s) : null;
        } catch (SQLException e) {
            throw new IllegalStateException("PostgreSQL at " + s.postgres().jdbcUrl() + ": " + e.getMessage(), e);
        }
    }
}
