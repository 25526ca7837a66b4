package dev.recount.stack;

import dev.recount.stack.cluster.ClusterProcessState;
import dev.recount.stack.cluster.LocalClusters;
import dev.recount.stack.embedded.ServiceState;
import dev.recount.stack.embedded.StackStatus;
import java.io.PrintWriter;

/** The "what runs where" block that {@code up} and {@code status} print. */
final class StatusPrinter {
    private StatusPrinter() {}

    static void print(PrintWriter out, StackStatus status) {
        service(out, status.kafka());
        service(out, status.postgres());
        if (!status.bootstrapServers().isEmpty())
            out.printf("  %-18s %s%n", "bootstrap servers", status.bootstrapServers());
        if (!status.jdbcUrl().isEmpty()) {
            out.printf(
                    "  %-18s %s%s%n",
                    "JDBC URL",
                    status.jdbcUrl(),
                    status.adminUser().isEmpty() ? "" : " (user " + status.adminUser() + ")");
        }
        out.printf("  %-18s %s%n", "settings", status.layout().envFile());
        out.printf("  %-18s %s%n", "logs", status.layout().logs());
    }

    /** The local clusters' processes and addresses (after {@code up --cluster}). */
    static void printClusters(PrintWriter out, LocalClusters clusters) {
        for (ClusterProcessState p : clusters.status()) {
            out.printf(
                    "  %-19s %s%n",
                    p.name(),
                    p.running()
                            ? "running, pid " + p.pid()
                            : "stopped"
                                    + p.stalePid().stream()
                                            .mapToObj(
                                                    pid -> " (pid " + pid
                                                            + " is gone without a clean shutdown; `recount up --cluster` starts it again)")
                                            .findFirst()
                                            .orElse(""));
        }
        clusters.addresses().forEach((what, where) -> out.printf("  %-19s %s%n", what, where));
    }

    private static void service(PrintWriter out, ServiceState s) {
        String state = !s.running() ? "stopped" : "running, pid " + s.pid() + (s.answering() ? "" : ", NOT answering");
        String where = s.port() > 0 ? "127.0.0.1:" + s.port() : "-";
        out.printf("  %-18s %-30s %-17s data %s%n", s.name(), state, where, s.data());
        if (!s.running() && s.stalePid().isPresent()) {
            out.printf(
                    "  %-18s (pid %d of a previous run is gone without a clean shutdown; `recount up` recovers)%n",
                    "", s.stalePid().getAsLong());
        }
    }
}
