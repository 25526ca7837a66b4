package dev.recount.stack;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.stack.cluster.ClusterProcessState;
import dev.recount.stack.cluster.LocalClusters;
import dev.recount.stack.embedded.ServiceState;
import dev.recount.stack.embedded.StackStatus;
import java.nio.file.Path;
import java.util.OptionalLong;

/** What {@code status --json} prints: the facts of {@link StatusPrinter}'s text, one JSON object. */
final class StatusJson {
    private StatusJson() {}

    /** No stack was ever created in {@code home}. */
    static ObjectNode absent(Path home) {
        ObjectNode json = JsonOutput.object();
        json.put("home", home.toString());
        json.put("state", "absent");
        return json;
    }

    /**
     * @param state    "running", "stopped" or "partly running", as the text says
     * @param clusters the local clusters, or null when none are configured
     */
    static ObjectNode of(Path home, String state, StackStatus status, LocalClusters clusters) {
        ObjectNode json = JsonOutput.object();
        json.put("home", home.toString());
        json.put("state", state);
        ArrayNode services = json.putArray("services");
        services.add(service(status.kafka()));
        services.add(service(status.postgres()));
        putIfPresent(json, "bootstrap_servers", status.bootstrapServers());
        putIfPresent(json, "jdbc_url", status.jdbcUrl());
        putIfPresent(json, "admin_user", status.adminUser());
        json.put("settings", status.layout().envFile().toString());
        json.put("logs", status.layout().logs().toString());
        if (clusters != null) {
            ArrayNode processes = json.putArray("cluster_processes");
            for (ClusterProcessState p : clusters.status()) {
                ObjectNode node = processes.addObject();
                node.put("name", p.name());
                node.put("state", p.running() ? "running" : "stopped");
                if (p.running()) node.put("pid", p.pid());
                putStalePid(node, p.stalePid());
            }
            ObjectNode addresses = json.putObject("cluster_addresses");
            clusters.addresses().forEach(addresses::put);
        }
        return json;
    }

    private static ObjectNode service(ServiceState s) {
        ObjectNode node = JsonOutput.object();
        node.put("name", s.name());
        node.put("state", s.running() ? "running" : "stopped");
        node.put("answering", s.running() && s.answering());
        if (s.running()) node.put("pid", s.pid());
        if (s.port() > 0) node.put("address", "127.0.0.1:" + s.port());
        node.put("data", s.data().toString());
        if (!s.running()) putStalePid(node, s.stalePid());
        return node;
    }

    /** The pid of a previous run that is gone without a clean shutdown. */
    private static void putStalePid(ObjectNode node, OptionalLong stalePid) {
        stalePid.ifPresent(pid -> node.put("stale_pid", pid));
    }

    private static void putIfPresent(ObjectNode json, String field, String value) {
        if (!value.isEmpty()) json.put(field, value);
    }
}
