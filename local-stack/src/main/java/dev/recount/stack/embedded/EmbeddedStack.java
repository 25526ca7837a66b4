package dev.recount.stack.embedded;

import dev.recount.core.config.ConfigException;
import dev.recount.core.config.LocalEnvFile;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.time.Deadline;
import dev.recount.db.Migrations;
import dev.recount.db.Role;
import dev.recount.db.sets.MetricSetRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;
import org.apache.kafka.common.Uuid;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * The local stack: a Kafka broker (KRaft) and a PostgreSQL, each its own process, with everything under one home
 * directory ({@link StackLayout}). {@code up} is idempotent and recovers from a previous run that was killed;
 * {@code down} stops both; {@code status} says what runs where.
 */
public final class EmbeddedStack {
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

    private final StackLayout layout;
    private final Consumer<String> progress;
    private final KafkaBroker kafka;
    private final PostgresServer postgres;

    /** @param progress receives one line per step, for people watching {@code up} and {@code down} */
    public EmbeddedStack(StackLayout layout, Consumer<String> progress) {
        this.layout = layout;
        this.progress = progress;
        this.kafka = new KafkaBroker(layout);
        this.postgres = new PostgresServer(layout);
    }

    public StackLayout layout() {
        return layout;
    }

    /**
     * What {@code up} did.
     *
     * @param wasRunning        both services were already running before this call
     * @param topics            topic → partitions
     * @param migrationsApplied migrations this call applied (0 when the schema was up to date)
     * @param schemaVersion     the schema's version afterwards
     * @param logins            each role's login for the schema (passwords in {@link StackLayout#passwordDir()})
     * @param notes             things worth telling the user (a requested port that a running service does not use)
     */
    public record UpResult(
            StackStatus status,
            boolean wasRunning,
            Map<String, Integer> topics,
            int migrationsApplied,
            String schemaVersion,
            Map<Role, String> logins,
            List<String> notes) {}

    public UpResult up(UpSettings settings) {
        Deadline deadline = Deadline.after(settings.timeout());
        try (StackLock lock = StackLock.acquire(layout, settings.timeout())) {
            createDirectories();
            Started started = new Started();
            try {
                return upLocked(settings, deadline, started);
            } catch (RuntimeException e) {
                // Leave things as they were: what this call started goes again (a failed testkit start must not
                // leak processes); what already ran keeps running.
                started.stopQuietly();
                throw e;
            }
        }
    }

    /** The services one {@code up} call started, to be stopped again if the call fails. */
    private final class Started {
        boolean kafkaStarted;
        boolean postgresStarted;

        void stopQuietly() {
            if (kafkaStarted || postgresStarted) progress.accept("up failed; stopping what it started");
            try {
                if (kafkaStarted) kafka.stop(STOP_TIMEOUT);
            } catch (RuntimeException e) {
                progress.accept("could not stop the Kafka broker this run started: " + e.getMessage());
            }
            try {
                if (postgresStarted) postgres.stop(STOP_TIMEOUT);
            } catch (RuntimeException e) {
                progress.accept("could not stop the PostgreSQL this run started: " + e.getMessage());
            }
        }
    }

    private UpResult upLocked(UpSettings settings, Deadline deadline, Started started) {
        StackState state = StackState.load(layout);
        OptionalLong kafkaPid = kafka.runningPid();
        Optional<PostgresServer.Running> pgRunning = postgres.running();
        boolean wasRunning = kafkaPid.isPresent() && pgRunning.isPresent();
        List<String> notes = new ArrayList<>();
        kafka.stalePid()
                .ifPresent(pid -> progress.accept("the Kafka broker of a previous run (pid " + pid
                        + ") is gone without a clean shutdown; starting it again (Kafka recovers its logs)"));
        postgres.stalePid()
                .ifPresent(pid -> progress.accept("the PostgreSQL of a previous run (pid " + pid
                        + ") is gone without a clean shutdown; starting it again (PostgreSQL replays its WAL)"));

        // Everything that can fail without a running service is checked before anything starts: ports, the
        // admin password, and (as root) whether PostgreSQL can run at all.
        int kafkaPort;
        int controllerPort = state.kafkaControllerPort();
        if (kafkaPid.isPresent()) {
            kafkaPort = state.kafkaPort();
            if (kafkaPort == 0) {
                throw new StackException("a Kafka broker runs (pid " + kafkaPid.getAsLong() + ") but "
                        + layout.stateFile() + " does not say on which port; run `recount down`, then `recount up`");
            }
            noteIfMoved(notes, "Kafka", settings.kafkaPort(), kafkaPort);
        } else {
            kafkaPort = Ports.choose(
                    settings.kafkaPort(), state.kafkaPort(), "Kafka port (local.kafka-port)", settings.postgresPort());
            controllerPort = Ports.choose(
                    0, state.kafkaControllerPort(), "Kafka controller port", kafkaPort, settings.postgresPort());
        }
        int pgPort;
        if (pgRunning.isPresent()) {
            pgPort = pgRunning.get().port();
            noteIfMoved(notes, "PostgreSQL", settings.postgresPort(), pgPort);
        } else {
            pgPort = Ports.choose(
                    settings.postgresPort(),
                    state.postgresPort(),
                    "PostgreSQL port (local.postgres-port)",
                    kafkaPort,
                    controllerPort);
            if (RootCheck.isRoot()) RootCheck.requireUnshare();
        }
        String password = postgres.adminPassword();

        String clusterId = Optional.ofNullable(state.get(StackState.KAFKA_CLUSTER_ID))
                .orElseGet(() -> Uuid.randomUuid().toString());
        // The cluster keeps the superuser it was created with, whatever the config says later.
        String adminUser = postgres.isInitialized() && state.get(StackState.POSTGRES_ADMIN_USER) != null
                ? state.get(StackState.POSTGRES_ADMIN_USER)
                : settings.adminUser();
        state.set(StackState.KAFKA_PORT, kafkaPort);
        state.set(StackState.KAFKA_CONTROLLER_PORT, controllerPort);
        state.set(StackState.KAFKA_CLUSTER_ID, clusterId);
        state.set(StackState.POSTGRES_PORT, pgPort);
        state.set(StackState.POSTGRES_ADMIN_USER, adminUser);
        state.set(StackState.POSTGRES_DATABASE, settings.database());
        state.save(layout);

        // Kafka's JVM starts in the background while PostgreSQL is set up; both are awaited below.
        long brokerPid;
        if (kafkaPid.isPresent()) {
            brokerPid = kafkaPid.getAsLong();
        } else {
            progress.accept(
                    "starting the Kafka broker on 127.0.0.1:" + kafkaPort + " (data " + layout.kafkaData() + ")");
            brokerPid = kafka.start(
                    kafkaPort, controllerPort, clusterId, settings.topics().inputPartitions());
            started.kafkaStarted = true;
        }

        if (pgRunning.isEmpty()) {
            if (!postgres.isInitialized()) {
                progress.accept("creating the PostgreSQL cluster in " + layout.postgresData()
                        + (RootCheck.isRoot() ? " (as root: under `unshare -U`)" : ""));
                postgres.initializeIfNeeded(adminUser);
            }
            progress.accept("starting PostgreSQL on 127.0.0.1:" + pgPort);
            started.postgresStarted = true;
            postgres.start(pgPort, remaining(deadline));
        }
        if (!postgres.awaitAnswer(pgPort, adminUser, password, remaining(deadline))) {
            throw new StackException("PostgreSQL on 127.0.0.1:" + pgPort + " does not accept the admin login; see "
                    + layout.logs().resolve("postgres.log"));
        }
        postgres.createDatabaseIfMissing(pgPort, adminUser, password, settings.database());
        String jdbcUrl = PostgresServer.jdbcUrl(pgPort, settings.database());
        MigrateResult migrated = migrate(jdbcUrl, adminUser, password, settings.schema(), settings.metricSets());
        Map<Role, String> logins =
                postgres.ensureLogins(pgPort, adminUser, password, settings.database(), settings.schema());

        kafka.awaitReady(kafkaPort, brokerPid, remaining(deadline));
        String bootstrap = "127.0.0.1:" + kafkaPort;
        Map<String, Integer> topics = TopicSetup.ensure(bootstrap, settings.topics(), remaining(deadline));
        topics.forEach((name, partitions) -> {
            if (partitions != settings.topics().inputPartitions()) {
                notes.add("topic " + name + " exists with " + partitions + " partitions, not "
                        + settings.topics().inputPartitions() + "; it was left as it is");
            }
        });

        LocalEnvFile.write(
                layout.envFile(),
                envValues(bootstrap, pgPort, settings.database(), adminUser, password, jdbcUrl, layout.passwordDir()));
        StackStatus status = new StackStatus(
                layout,
                new ServiceState(
                        "kafka",
                        true,
                        kafka.runningPid().orElse(brokerPid),
                        kafkaPort,
                        true,
                        layout.kafkaData(),
                        OptionalLong.empty()),
                new ServiceState(
                        "postgresql",
                        true,
                        postgres.running().map(PostgresServer.Running::pid).orElse(0L),
                        pgPort,
                        true,
                        layout.postgresData(),
                        OptionalLong.empty()),
                bootstrap,
                jdbcUrl,
                adminUser);
        String version =
                migrated.targetSchemaVersion != null ? migrated.targetSchemaVersion : migrated.initialSchemaVersion;
        return new UpResult(status, wasRunning, topics, migrated.migrationsExecuted, version, logins, notes);
    }

    /** Stops both services. @return the services that were running and are now stopped, e.g. ["kafka", "postgresql"] */
    public List<String> down() {
        if (!Files.isDirectory(layout.home())) return List.of();
        try (StackLock lock = StackLock.acquire(layout, STOP_TIMEOUT.multipliedBy(2))) {
            List<String> stopped = new ArrayList<>();
            if (kafka.runningPid().isPresent()) {
                progress.accept(
                        "stopping the Kafka broker (pid " + kafka.runningPid().getAsLong() + ")");
                if (kafka.stop(STOP_TIMEOUT) == KafkaBroker.StopOutcome.KILLED) {
                    progress.accept("the Kafka broker did not shut down within " + STOP_TIMEOUT.toSeconds()
                            + " s and was killed");
                }
                stopped.add("kafka");
            }
            Optional<PostgresServer.Running> pg = postgres.running();
            if (pg.isPresent()) {
                progress.accept("stopping PostgreSQL (pid " + pg.get().pid() + ")");
                postgres.stop(STOP_TIMEOUT);
                stopped.add("postgresql");
            }
            return stopped;
        }
    }

    /** What runs where; with {@code probe}, also whether each service answers a request. */
    public StackStatus status(boolean probe) {
        StackState state = StackState.load(layout);
        OptionalLong brokerPid = kafka.runningPid();
        int kafkaPort = state.kafkaPort();
        boolean kafkaAnswers = probe
                && brokerPid.isPresent()
                && kafkaPort > 0
                && KafkaBroker.answers(kafkaPort, Duration.ofSeconds(5));
        ServiceState kafkaState = new ServiceState(
                "kafka",
                brokerPid.isPresent(),
                brokerPid.orElse(0),
                kafkaPort,
                kafkaAnswers,
                layout.kafkaData(),
                kafka.stalePid());

        Optional<PostgresServer.Running> pg = postgres.running();
        int pgPort = pg.map(PostgresServer.Running::port).orElse(state.postgresPort());
        String adminUser =
                Optional.ofNullable(state.get(StackState.POSTGRES_ADMIN_USER)).orElse("");
        boolean pgAnswers = probe
                && pg.isPresent()
                && pgPort > 0
                && StackFiles.firstLine(layout.postgresPasswordFile())
                        .map(pw -> postgres.answers(pgPort, adminUser, pw))
                        .orElse(false);
        ServiceState pgState = new ServiceState(
                "postgresql",
                pg.isPresent(),
                pg.map(PostgresServer.Running::pid).orElse(0L),
                pgPort,
                pgAnswers,
                layout.postgresData(),
                postgres.stalePid());

        String database =
                Optional.ofNullable(state.get(StackState.POSTGRES_DATABASE)).orElse("recount");
        return new StackStatus(
                layout,
                kafkaState,
                pgState,
                kafkaPort > 0 ? "127.0.0.1:" + kafkaPort : "",
                pgPort > 0 ? PostgresServer.jdbcUrl(pgPort, database) : "",
                adminUser);
    }

    /**
     * local.env: the administrator's settings the contract names (so {@code . local.env && psql} works), and where the
     * components find their own logins' passwords. The launcher drops PGPASSWORD again before it starts a component.
     */
    static Map<String, String> envValues(
            String bootstrap,
            int pgPort,
            String database,
            String user,
            String password,
            String jdbcUrl,
            java.nio.file.Path passwordDir) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
        env.put("PGHOST", "127.0.0.1");
        env.put("PGPORT", Integer.toString(pgPort));
        env.put("PGDATABASE", database);
        env.put("PGUSER", user);
        env.put("PGPASSWORD", password);
        env.put("RECOUNT_JDBC_URL", jdbcUrl);
        env.put("RECOUNT_PGPASSWORD_DIR", passwordDir.toString());
        return env;
    }

    private MigrateResult migrate(String jdbcUrl, String user, String password, String schema, MetricSets sets) {
        try {
            Migrations.Applied applied = Migrations.apply(jdbcUrl, user, password, schema, sets);
            MigrateResult result = applied.flyway();
            if (result.migrationsExecuted > 0) {
                progress.accept("applied " + result.migrationsExecuted + " migration(s) to schema " + schema
                        + " (now at version " + result.targetSchemaVersion + ")");
            }
            if (applied.sets().changes().containsValue(MetricSetRegistry.Change.CREATED)
                    || applied.sets().changes().containsValue(MetricSetRegistry.Change.REMOVED)) {
                progress.accept("metric sets of schema " + schema + ": "
                        + applied.sets().summary());
            }
            return result;
        } catch (ConfigException e) {
            throw e; // a set changed in place: the user's definitions, exit 2 with its own message
        } catch (RuntimeException e) {
            throw new StackException(
                    "applying the Flyway migrations to schema " + schema + " failed: " + e.getMessage(), e);
        }
    }

    private void createDirectories() {
        try {
            // Owner-only: it holds the admin password, the logins' passwords, the data and (by default) the lake.
            StackFiles.ownerOnlyDirectory(layout.home());
            Files.createDirectories(layout.logs());
            Files.createDirectories(layout.kafkaDir());
            Files.createDirectories(layout.postgresDir());
            StackFiles.ownerOnlyDirectory(layout.passwordDir());
        } catch (IOException e) {
            throw new StackException("cannot create " + layout.home() + ": " + e.getMessage(), e);
        }
    }

    private static void noteIfMoved(List<String> notes, String service, int requested, int actual) {
        if (requested != 0 && requested != actual) {
            notes.add(service + " already runs on port " + actual + ", not " + requested
                    + "; run `recount down` first to move it");
        }
    }

    /** What is left of {@code up --wait} for the next step, at least a second (a fair chance to answer). */
    private static Duration remaining(Deadline deadline) {
        return deadline.remaining(Duration.ofSeconds(1));
    }
}
