package dev.recount.tools;

import dev.recount.core.config.LocalEnvFile;
import dev.recount.core.config.RecountConfig;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where the commands that talk to Kafka connect when nothing says otherwise: the local stack's own local.env.
 * Order: an explicit flag; then {@code kafka.bootstrap-servers} from $KAFKA_BOOTSTRAP_SERVERS or a config file;
 * then the local stack's {@code <local.home>/local.env}; then the built-in default.
 */
public final class LocalConnection {
    private LocalConnection() {}

    public static String kafkaBootstrapServers(RecountConfig config, String flag) {
        if (flag != null && !flag.isBlank()) return flag.trim();
        String configured = config.get("kafka.bootstrap-servers");
        if (!configured.equals(RecountConfig.defaults().get("kafka.bootstrap-servers"))) return configured;
        Map<String, String> local = LocalEnvFile.read(LocalEnvFile.in(Path.of(config.get("local.home"))));
        String fromStack = local.get("KAFKA_BOOTSTRAP_SERVERS");
        return fromStack != null && !fromStack.isBlank() ? fromStack : configured;
    }
}
