package dev.recount.stack.embedded;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * What the first {@code up} chose and later ones reuse ({@code home/stack.properties}): the ports (so local.env
 * stays the same across restarts while they are free), the Kafka cluster id, and the admin user and database the
 * PostgreSQL cluster was created with (the cluster keeps them even if the config later says otherwise).
 */
public final class StackState {
    static final String KAFKA_PORT = "kafka.port";
    static final String KAFKA_CONTROLLER_PORT = "kafka.controller-port";
    static final String KAFKA_CLUSTER_ID = "kafka.cluster-id";
    static final String POSTGRES_PORT = "postgres.port";
    static final String POSTGRES_ADMIN_USER = "postgres.admin-user";
    static final String POSTGRES_DATABASE = "postgres.database";

    private final Map<String, String> values;

    private StackState(Map<String, String> values) {
        this.values = values;
    }

    public static StackState load(StackLayout layout) {
        Map<String, String> values = new TreeMap<>();
        Path file = layout.stateFile();
        if (Files.isRegularFile(file)) {
            Properties p = new Properties();
            try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(in);
            } catch (IOException e) {
                throw new StackException("cannot read " + file + ": " + e.getMessage(), e);
            }
            p.stringPropertyNames().forEach(k -> values.put(k, p.getProperty(k).trim()));
        }
        return new StackState(values);
    }

    public void save(StackLayout layout) {
        StringBuilder text =
                new StringBuilder("# Chosen by `recount up` and reused by later runs; delete to choose afresh.\n");
        values.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        StackFiles.writeAtomically(layout.stateFile(), text.toString(), false);
    }

    public int port(String key) {
        String v = values.get(key);
        if (v == null || v.isBlank()) return 0;
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    public String get(String key) {
        return values.get(key);
    }

    public void set(String key, Object value) {
        values.put(key, String.valueOf(value));
    }

    public int kafkaPort() {
        return port(KAFKA_PORT);
    }

    public int kafkaControllerPort() {
        return port(KAFKA_CONTROLLER_PORT);
    }

    public int postgresPort() {
        return port(POSTGRES_PORT);
    }
}
