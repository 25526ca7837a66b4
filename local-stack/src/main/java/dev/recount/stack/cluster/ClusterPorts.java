package dev.recount.stack.cluster;

import dev.recount.stack.embedded.Ports;
import dev.recount.stack.embedded.StackException;
import dev.recount.stack.embedded.StackFiles;
import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.util.Properties;

/**
 * The clusters' ports on 127.0.0.1, chosen at the first {@code up --cluster} and reused while free (so the printed
 * Web UI addresses stay the same across restarts), else any free port. Kept in {@code clusters/clusters.properties}.
 */
public record ClusterPorts(
        int flinkRest, int flinkRpc, int flinkBlob, int sparkMaster, int sparkMasterUi, int sparkWorkerUi) {

    static ClusterPorts load(ClusterLayout layout) {
        Properties p = new Properties();
        if (Files.exists(layout.stateFile())) {
            try (Reader r = Files.newBufferedReader(layout.stateFile())) {
                p.load(r);
            } catch (IOException e) {
                throw new StackException("cannot read " + layout.stateFile() + ": " + e.getMessage(), e);
            }
        }
        return new ClusterPorts(
                port(p, "flink.rest-port"),
                port(p, "flink.rpc-port"),
                port(p, "flink.blob-port"),
                port(p, "spark.master-port"),
                port(p, "spark.master-ui-port"),
                port(p, "spark.worker-ui-port"));
    }

    /** Keeps the ports of processes that run; picks (previous if free, else any) for the others. */
    static ClusterPorts choose(ClusterPorts previous, boolean flinkRuns, boolean sparkRuns, int... avoid) {
        int[] taken = avoid.clone();
        int rest = flinkRuns ? previous.flinkRest : pick(previous.flinkRest, "Flink REST port", taken);
        taken = add(taken, rest);
        int rpc = flinkRuns ? previous.flinkRpc : pick(previous.flinkRpc, "Flink JobManager RPC port", taken);
        taken = add(taken, rpc);
        int blob = flinkRuns ? previous.flinkBlob : pick(previous.flinkBlob, "Flink BlobServer port", taken);
        taken = add(taken, blob);
        int master = sparkRuns ? previous.sparkMaster : pick(previous.sparkMaster, "Spark master port", taken);
        taken = add(taken, master);
        int masterUi = sparkRuns ? previous.sparkMasterUi : pick(previous.sparkMasterUi, "Spark master UI port", taken);
        taken = add(taken, masterUi);
        int workerUi = sparkRuns ? previous.sparkWorkerUi : pick(previous.sparkWorkerUi, "Spark worker UI port", taken);
        return new ClusterPorts(rest, rpc, blob, master, masterUi, workerUi);
    }

    void save(ClusterLayout layout) {
        Properties p = new Properties();
        p.setProperty("flink.rest-port", Integer.toString(flinkRest));
        p.setProperty("flink.rpc-port", Integer.toString(flinkRpc));
        p.setProperty("flink.blob-port", Integer.toString(flinkBlob));
        p.setProperty("spark.master-port", Integer.toString(sparkMaster));
        p.setProperty("spark.master-ui-port", Integer.toString(sparkMasterUi));
        p.setProperty("spark.worker-ui-port", Integer.toString(sparkWorkerUi));
        StringWriter w = new StringWriter();
        try {
            p.store(w, "recount up --cluster: ports on 127.0.0.1");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        StackFiles.writeAtomically(layout.stateFile(), w.toString(), false);
    }

    private static int pick(int previous, String what, int[] avoid) {
        return Ports.choose(0, previous, what, avoid);
    }

    private static int[] add(int[] values, int v) {
        int[] out = java.util.Arrays.copyOf(values, values.length + 1);
        out[values.length] = v;
        return out;
    }

    private static int port(Properties p, String key) {
        try {
            return Integer.parseInt(p.getProperty(key, "0").strip());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
