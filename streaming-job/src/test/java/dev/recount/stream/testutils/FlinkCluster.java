package dev.recount.stream.testutils;

import dev.recount.stream.run.StreamRun;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A Flink MiniCluster for one test class (JUnit 5 extension), with direct access for fault injection (killing a
 * TaskManager). Flink's own MiniClusterExtension drags in JUnit 4; this needs nothing but the MiniCluster.
 */
public final class FlinkCluster implements BeforeAllCallback, AfterAllCallback {
    private final int slots;
    private MiniCluster cluster;

    public FlinkCluster(int slots) {
        this.slots = slots;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Configuration conf = new Configuration();
        // The hashmap state backend needs no managed memory; keep the test JVM small.
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(16));
        cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(slots)
                .withRandomPorts()
                .build());
        cluster.start();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (cluster != null) cluster.close();
    }

    public MiniCluster miniCluster() {
        return cluster;
    }

    /** Environments that submit to this cluster, with the job's own configuration applied. */
    public StreamRun.Environments environments() {
        return conf -> new TestStreamEnvironment(cluster, conf, slots, List.of(), List.of());
    }

    /** Kills the TaskManager (the job fails over to its last checkpoint) and starts a fresh one. */
    public void killTaskManager() throws Exception {
        cluster.terminateTaskManager(0).get();
        cluster.startTaskManager();
    }
}
