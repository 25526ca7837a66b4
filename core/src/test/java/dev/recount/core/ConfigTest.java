package dev.recount.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.config.EventTimeSettings;
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
    void theCostCeilingIsASettingThatMustBeANonNegativeInteger() {
        assertThat(RecountConfig.defaults().with("validation.max-cost-micros", "5000").eventTime().validation()
                .maxCostMicros()).isEqualTo(5000);
        assertThatThrownBy(() -> RecountConfig.defaults().with("validation.max-cost-micros", "1e12").validation())
                .hasMessageContaining("validation.max-cost-micros").hasMessageContaining("1e12");
        assertThatThrownBy(() -> RecountConfig.defaults().with("validation.max-cost-micros", "-1").validation())
                .hasMessageContaining("validation.max-cost-micros").hasMessageContaining("negative");
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
                .hasMessageContaining("windw.size").hasMessageContaining(file.toString());
        assertThatThrownBy(() -> RecountConfig.defaults().with("nope", "1")).hasMessageContaining("nope");
    }

    @Test
    void passwordsComeFromTheEnvironmentOrAFileOnly() throws IOException {
        Path secret = dir.resolve("pw");
        Files.writeString(secret, "s3cret\n");

        assertThat(RecountConfig.load(null, Map.of("PGPASSWORD", "fromenv")).postgresPassword()).isEqualTo("fromenv");
        assertThat(RecountConfig.load(null, Map.of()).with("postgres.password-file", secret.toString()).postgresPassword())
                .isEqualTo("s3cret");
        assertThat(RecountConfig.load(null, Map.of()).postgresPassword()).isNull();
        assertThat(RecountConfig.defaults().asMap()).doesNotContainKey("postgres.password");
    }

    @Test
    void dedupHorizonShorterThanTheUpdateHorizonIsRefused() {
        assertThatThrownBy(() -> RecountConfig.defaults().with("dedup.horizon", "1m").eventTime())
                .hasMessageContaining("dedupHorizon");
        assertThat(RecountConfig.defaults().eventTime().withAllowedLateness(Duration.ofMinutes(10)).dedupHorizon())
                .isEqualTo(Duration.ofSeconds(60 + 30 + 600));
    }

    @Test
    void badValuesNameTheSetting() {
        assertThatThrownBy(() -> RecountConfig.defaults().with("window.size", "soon").eventTime())
                .hasMessageContaining("window.size");
        assertThatThrownBy(() -> RecountConfig.defaults().with("time-zone", "Mars/Olympus").timeZone())
                .hasMessageContaining("Mars/Olympus");
    }
}
