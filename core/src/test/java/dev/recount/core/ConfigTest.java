package dev.recount.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.Component;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.PasswordSource;
import dev.recount.core.config.PostgresSettings;
import dev.recount.core.config.RecountConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigTest {
    @TempDir
    Path dir;

    @Test
    void defaultsMatchTheContract() {
        RecountConfig c = RecountConfig.defaults();
        EventTimeSettings t = c.eventTime();

        assertThat(c.topics().input()).isEqualTo("ad-events");
        assertThat(c.topics().deadLetter()).isEqualTo("ad-events-dlq");
        assertThat(c.topics().backfill()).isEqualTo("ad-events-late");
        assertThat(c.topics().inputPartitions()).isEqualTo(3);
        assertThat(t.windowSize()).isEqualTo(Duration.ofMinutes(1));
        assertThat(t.outOfOrderness()).isEqualTo(Duration.ofSeconds(30));
        assertThat(t.allowedLateness()).isEqualTo(Duration.ofMinutes(2));
        assertThat(t.idleness()).isEqualTo(Duration.ofMinutes(1));
        assertThat(t.maxPast()).isEqualTo(Duration.ofDays(7));
        assertThat(t.maxFuture()).isEqualTo(Duration.ofMinutes(5));
        assertThat(t.dedupHorizon()).isEqualTo(Duration.ofSeconds(210));
        assertThat(t.validation()).isEqualTo(c.validation());
        assertThat(c.validation().maxCostMicros()).isEqualTo(1_000_000_000_000L);
    }

    @Test
    void anEventIsLateOnArrivalBeyondItsWindowAndLatenessButNeverWithinAnHour() {
        EventTimeSettings t = RecountConfig.defaults().eventTime();
        assertThat(t.openFor()).isEqualTo(Duration.ofSeconds(210)); // 1 min + 30 s + 2 min
        assertThat(t.lateOnArrival()).isEqualTo(Duration.ofHours(1));
        EventTimeSettings hourly = t.withWindowSize(Duration.ofHours(1));
        assertThat(hourly.lateOnArrival()).isEqualTo(Duration.ofMinutes(60 + 2).plusSeconds(30));
    }

    @Test
    void theCostCeilingIsASettingThatMustBeANonNegativeInteger() {
        assertThat(RecountConfig.defaults()
                        .with("validation.max-cost-micros", "5000")
                        .eventTime()
                        .validation()
                        .maxCostMicros())
                .isEqualTo(5000);
        assertThatThrownBy(() -> RecountConfig.defaults()
                        .with("validation.max-cost-micros", "1e12")
                        .validation())
                .hasMessageContaining("validation.max-cost-micros")
                .hasMessageContaining("1e12");
        assertThatThrownBy(() -> RecountConfig.defaults()
                        .with("validation.max-cost-micros", "-1")
                        .validation())
                .hasMessageContaining("validation.max-cost-micros")
                .hasMessageContaining("negative");
    }

    /** A job whose output topic is its input would read its own dead letters back as dead letters, forever. */
    @Test
    void theThreeTopicsMustBeThreeTopics() {
        assertThat(RecountConfig.defaults().topics().input()).isEqualTo("ad-events");
        for (String[] setting : new String[][] {
            {"topics.dead-letter", "ad-events"}, {"topics.backfill", "ad-events"}, {"topics.backfill", "ad-events-dlq"}
        }) {
            assertThatThrownBy(() -> RecountConfig.defaults()
                            .with(setting[0], setting[1])
                            .topics())
                    .as(setting[0])
                    .hasMessageContaining("three different topics")
                    .hasMessageContaining(setting[1]);
        }
    }

    @Test
    void fileThenEnvironmentThenFlagsOverride() throws IOException {
        Path file = dir.resolve("recount.properties");
        Files.writeString(file, "window.size=5m\nkafka.bootstrap-servers=file:1\n");

        RecountConfig c = RecountConfig.load(file, Map.of("KAFKA_BOOTSTRAP_SERVERS", "env:2"))
                .with("watermark.out-of-orderness", "PT10S");

        assertThat(c.eventTime().windowSize()).isEqualTo(Duration.ofMinutes(5));
        assertThat(c.get("kafka.bootstrap-servers")).isEqualTo("env:2");
        assertThat(c.eventTime().outOfOrderness()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void unknownKeysAreRejectedWithTheirName() throws IOException {
        Path file = dir.resolve("typo.properties");
        Files.writeString(file, "windw.size=5m\n");

        assertThatThrownBy(() -> RecountConfig.load(file, Map.of()))
                .hasMessageContaining("windw.size")
                .hasMessageContaining(file.toString());
        assertThatThrownBy(() -> RecountConfig.defaults().with("nope", "1")).hasMessageContaining("nope");
    }

    @Test
    void passwordsComeFromTheEnvironmentOrAFileOnly() throws IOException {
        Path secret = dir.resolve("pw");
        Files.writeString(secret, "s3cret\n");

        assertThat(RecountConfig.load(null, Map.of("PGPASSWORD", "fromenv")).adminPassword())
                .isEqualTo("fromenv");
        assertThat(RecountConfig.load(null, Map.of())
                        .with("postgres.password-file", secret.toString())
                        .adminPassword())
                .isEqualTo("s3cret");
        assertThat(RecountConfig.load(null, Map.of()).adminPassword()).isNull();
        assertThat(RecountConfig.defaults().asMap()).doesNotContainKey("postgres.password");
        assertThat(RecountConfig.defaults().asMap().keySet())
                .filteredOn(k -> k.startsWith("postgres."))
                .allMatch(k -> !k.endsWith("password"), "no setting holds a password itself");
    }

    @Test
    void eachComponentLogsInAsItsOwnSchemaScopedLoginNotTheAdministrator() {
        RecountConfig c = RecountConfig.load(null, Map.of("PGUSER", "admin")).with("postgres.schema", "shop");

        assertThat(c.adminPostgres().user()).isEqualTo("admin");
        assertThat(c.postgres(Component.STREAM).user()).isEqualTo("shop_stream_login");
        assertThat(c.postgres(Component.BATCH).user()).isEqualTo("shop_batch_login");
        assertThat(c.postgres(Component.RECONCILER).user()).isEqualTo("shop_reconciler_login");
        assertThat(c.postgres(Component.BATCH).schema()).isEqualTo("shop");

        RecountConfig fromSecret = RecountConfig.load(null, Map.of("RECOUNT_STREAM_PGUSER", "stream_svc"))
                .with("postgres.batch.user", "batch_svc");
        assertThat(fromSecret.postgres(Component.STREAM).user()).isEqualTo("stream_svc");
        assertThat(fromSecret.postgres(Component.BATCH).user()).isEqualTo("batch_svc");
    }

    @Test
    void aComponentPasswordComesFromItsVariableThenItsFileThenThePasswordDirectory() throws IOException {
        Path passwords = Files.createDirectories(dir.resolve("secrets"));
        Files.writeString(passwords.resolve("recount_batch_login.password"), "from-dir\n");
        Path own = Files.writeString(dir.resolve("batch.pw"), "from-file\n");
        RecountConfig withDir = RecountConfig.load(null, Map.of("RECOUNT_PGPASSWORD_DIR", passwords.toString()));

        assertThat(withDir.password(Component.BATCH)).isEqualTo("from-dir");
        assertThat(withDir.with("postgres.batch.password-file", own.toString()).password(Component.BATCH))
                .isEqualTo("from-file");
        assertThat(RecountConfig.load(
                                null,
                                Map.of(
                                        "RECOUNT_PGPASSWORD_DIR",
                                        passwords.toString(),
                                        "RECOUNT_BATCH_PGPASSWORD",
                                        "from-env"))
                        .password(Component.BATCH))
                .isEqualTo("from-env");
        // Another component's variable or the administrator's is never taken.
        assertThat(RecountConfig.load(null, Map.of("PGPASSWORD", "admin", "RECOUNT_STREAM_PGPASSWORD", "stream"))
                        .password(Component.BATCH))
                .isNull();
        assertThatThrownBy(() -> withDir.password(Component.STREAM))
                .hasMessageContaining("stream login recount_stream_login")
                .hasMessageContaining("recount_stream_login.password");
    }

    @Test
    void aPasswordSourceNamesWhereThePasswordIsAndResolvesOnlyWhenAsked() throws IOException {
        Path file = Files.writeString(dir.resolve("stream.pw"), "s3cret\n");
        PasswordSource source = RecountConfig.load(null, Map.of("RECOUNT_STREAM_PGPASSWORD", "ignored-here"))
                .with("postgres.stream.password-file", file.toString())
                .passwordSource(Component.STREAM);

        assertThat(source.toString())
                .isEqualTo("$RECOUNT_STREAM_PGPASSWORD, else file " + file)
                .doesNotContain("s3cret");
        assertThat(source.resolve(Map.of())).isEqualTo("s3cret");
        assertThat(source.resolve(Map.of("RECOUNT_STREAM_PGPASSWORD", "where-it-runs")))
                .isEqualTo("where-it-runs");
        Files.writeString(file, "rotated\n");
        assertThat(source.resolve(Map.of()))
                .as("read at call time, not when configured")
                .isEqualTo("rotated");
    }

    @Test
    void aSchemaTooLongForItsRoleNamesIsRefused() {
        String longest = "s".repeat(PostgresSettings.MAX_SCHEMA_LENGTH);
        assertThat(("x".repeat(PostgresSettings.MAX_SCHEMA_LENGTH) + "_reconciler_login").length())
                .isEqualTo(63);
        assertThat(RecountConfig.defaults()
                        .with("postgres.schema", longest)
                        .postgres(Component.RECONCILER)
                        .user())
                .hasSize(63);
        assertThatThrownBy(() -> RecountConfig.defaults()
                        .with("postgres.schema", longest + "s")
                        .adminPostgres())
                .hasMessageContaining("postgres.schema")
                .hasMessageContaining("at most 46");
    }

    @Test
    void dedupHorizonShorterThanTheUpdateHorizonIsRefused() {
        assertThatThrownBy(() ->
                        RecountConfig.defaults().with("dedup.horizon", "1m").eventTime())
                .hasMessageContaining("dedupHorizon");
        assertThat(RecountConfig.defaults()
                        .eventTime()
                        .withAllowedLateness(Duration.ofMinutes(10))
                        .dedupHorizon())
                .isEqualTo(Duration.ofSeconds(60 + 30 + 600));
    }

    @Test
    void badValuesNameTheSetting() {
        assertThatThrownBy(() ->
                        RecountConfig.defaults().with("window.size", "soon").eventTime())
                .hasMessageContaining("window.size");
        assertThatThrownBy(() -> RecountConfig.defaults()
                        .with("time-zone", "Mars/Olympus")
                        .timeZone())
                .hasMessageContaining("Mars/Olympus");
    }
}
