package dev.recount.stack.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.stack.embedded.StackLayout;
import java.io.IOException;
import java.io.StringReader;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The parts of the local clusters that need no running process: their configuration, ports and process identity. */
class ClusterPiecesTest {
    private static final ClusterPorts PORTS = new ClusterPorts(41001, 41002, 41003, 41004, 41005, 41006);

    @TempDir
    Path home;

    @Test
    void everyFlinkAddressIsLoopbackAndTheWebUiCannotUploadRunOrCancel() {
        Map<String, String> c = yaml(FlinkStandalone.config(new ClusterLayout(new StackLayout(home)), PORTS));

        for (String key : List.of(
                "jobmanager.rpc.address",
                "jobmanager.bind-host",
                "rest.address",
                "rest.bind-address",
                "taskmanager.host",
                "taskmanager.bind-host")) {
            assertThat(c).as(key).containsEntry(key, "127.0.0.1");
        }
        assertThat(c)
                .containsEntry("rest.port", "41001")
                .containsEntry("jobmanager.rpc.port", "41002")
                .containsEntry("blob.server.port", "41003")
                .containsEntry("web.submit.enable", "false")
                .containsEntry("web.cancel.enable", "false");
        // Both TaskManagers together, and each alone, can run the job at its default parallelism (2).
        assertThat(Integer.parseInt(c.get("taskmanager.numberOfTaskSlots"))).isGreaterThanOrEqualTo(2);
        assertThat(c).containsEntry("taskmanager.load-balance.mode", "SLOTS");
    }

    @Test
    void sparkNeedsTheSharedSecretAndShowsNoKillLinks() throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(SparkStandalone.properties("s3cr3t")));

        assertThat(p)
                .containsEntry("spark.authenticate", "true")
                .containsEntry("spark.authenticate.secret", "s3cr3t")
                .containsEntry("spark.ui.killEnabled", "false")
                .containsEntry("spark.master.rest.enabled", "false")
                .containsEntry("spark.driver.bindAddress", "127.0.0.1");
        assertThat(SparkStandalone.masterUrl(PORTS)).isEqualTo("spark://127.0.0.1:41004");
    }

    @Test
    void portsOfRunningClustersStayAndFreedPortsAreReused() throws IOException {
        int free;
        try (ServerSocket s = new ServerSocket(0)) {
            free = s.getLocalPort();
        }
        ClusterPorts previous = new ClusterPorts(free, 0, 0, 0, 0, 0);
        ClusterPorts chosen = ClusterPorts.choose(previous, false, false);
        assertThat(chosen.flinkRest()).isEqualTo(free);
        assertThat(List.of(
                        chosen.flinkRpc(),
                        chosen.flinkBlob(),
                        chosen.sparkMaster(),
                        chosen.sparkMasterUi(),
                        chosen.sparkWorkerUi()))
                .allMatch(p -> p > 0)
                .doesNotHaveDuplicates()
                .doesNotContain(free);

        // A running cluster keeps its ports even when they are taken (by itself).
        assertThat(ClusterPorts.choose(PORTS, true, true)).isEqualTo(PORTS);
    }

    @Test
    void portsSurviveARestartOfUp() {
        ClusterLayout layout = new ClusterLayout(new StackLayout(home));
        PORTS.save(layout);
        assertThat(ClusterPorts.load(layout)).isEqualTo(PORTS);
    }

    @Test
    void aPidIsOursOnlyWithOurMarkerOnItsCommandLine() {
        ClusterLayout layout = new ClusterLayout(new StackLayout(home));
        DetachedJvm jvm =
                new DetachedJvm("flink taskmanager 1", layout.pidFile("flink-taskmanager-1"), "x:flink-taskmanager-1");
        dev.recount.stack.embedded.StackFiles.writeAtomically(
                layout.pidFile("flink-taskmanager-1"), ProcessHandle.current().pid() + "\n", false);

        // This test JVM has that pid but not the marker: a recycled pid is not our TaskManager.
        assertThat(jvm.runningPid()).isEmpty();
        assertThat(jvm.stalePid()).hasValue(ProcessHandle.current().pid());
    }

    private static Map<String, String> yaml(String text) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : text.split("\\R")) {
            if (line.isBlank() || line.startsWith("#")) continue;
            int colon = line.indexOf(": ");
            values.put(line.substring(0, colon), line.substring(colon + 2).strip());
        }
        return values;
    }
}
