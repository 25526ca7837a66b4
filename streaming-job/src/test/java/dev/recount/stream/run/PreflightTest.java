package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.Test;

/** The start's warning about future record timestamps, on topic descriptions as brokers of each version give them. */
class PreflightTest {
    /** Brokers before Kafka 4.0: where after.max.ms is unbounded or missing, difference.max.ms bounds the future. */
    @Test
    void onOlderBrokersTheOlderSettingBoundsTheFuture() {
        ConfigEntry unbounded =
                new ConfigEntry(TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG, String.valueOf(Long.MAX_VALUE));
        ConfigEntry difference = new ConfigEntry(Preflight.TIMESTAMP_DIFFERENCE_MAX_MS, "600000");
        assertThat(Preflight.futureTimestampsAccepted("t", new Config(List.of(unbounded, difference))))
                .as("3.6-3.9 with difference.max.ms set")
                .isEmpty();
        assertThat(Preflight.futureTimestampsAccepted("t", new Config(List.of(difference))))
                .as("before 3.6")
                .isEmpty();
        assertThat(Preflight.futureTimestampsAccepted(
                        "t",
                        new Config(List.of(
                                unbounded,
                                new ConfigEntry(
                                        Preflight.TIMESTAMP_DIFFERENCE_MAX_MS, String.valueOf(Long.MAX_VALUE))))))
                .hasValueSatisfying(w -> assertThat(w)
                        .contains("any time ahead", "(message.timestamp.after.max.ms=" + Long.MAX_VALUE + ")"));
        assertThat(Preflight.futureTimestampsAccepted(
                        "t", new Config(List.of(new ConfigEntry(Preflight.TIMESTAMP_DIFFERENCE_MAX_MS, "86400000")))))
                .hasValueSatisfying(w -> assertThat(w)
                        .contains("up to 1d ahead", "set message.timestamp.difference.max.ms to at most 3600000"));
    }
}
