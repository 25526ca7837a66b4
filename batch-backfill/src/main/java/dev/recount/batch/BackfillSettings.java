package dev.recount.batch;

import dev.recount.core.config.Component;
import dev.recount.core.config.PostgresSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.window.WindowAlignment;
import java.time.Duration;
import java.time.ZoneId;

/**
 * The settings the batch layer reads from {@link RecountConfig} (see config/recount.properties). No secrets.
 *
 * @param postgres the batch layer's own login ({@code postgres.batch.user}) and schema
 */
public record BackfillSettings(
        String lakePath,
        String sparkMaster,
        Duration lockTimeout,
        String affectedGroup,
        String backfillTopic,
        String bootstrapServers,
        ZoneId timeZone,
        WindowAlignment windows,
        PostgresSettings postgres) {

    public BackfillSettings {
        if (lakePath == null || lakePath.isBlank()) throw new IllegalArgumentException("lake.path must not be empty");
        if (affectedGroup == null || affectedGroup.isBlank()) {
            throw new IllegalArgumentException("batch.affected-group must not be empty");
        }
        if (backfillTopic == null || backfillTopic.isBlank()) {
            throw new IllegalArgumentException("topics.backfill must not be empty");
        }
    }

    public static BackfillSettings from(RecountConfig config) {
        return new BackfillSettings(
                config.get("lake.path"),
                config.get("batch.spark-master"),
                config.duration("batch.lock-timeout"),
                config.get("batch.affected-group"),
                config.topics().backfill(),
                config.get("kafka.bootstrap-servers"),
                config.timeZone(),
                config.eventTime().windows(),
                config.postgres(Component.BATCH));
    }
}
