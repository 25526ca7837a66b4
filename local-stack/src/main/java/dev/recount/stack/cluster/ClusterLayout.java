package dev.recount.stack.cluster;

import dev.recount.stack.embedded.StackLayout;
import java.nio.file.Path;

/**
 * Where the local Flink and Spark clusters keep their configuration, pids and scratch space: {@code <home>/clusters}.
 * Their logs go to {@code <home>/logs} next to Kafka's and PostgreSQL's.
 */
public record ClusterLayout(StackLayout stack) {
    public Path root() {
        return stack.home().resolve("clusters");
    }

    /** Ports and the names of what runs, chosen once and reused (as stack.properties is for Kafka and PostgreSQL). */
    public Path stateFile() {
        return root().resolve("clusters.properties");
    }

    public Path flinkDir() {
        return root().resolve("flink");
    }

    /** Flink's configuration directory: config.yaml and the log configuration; {@code flink run} reads it too. */
    public Path flinkConf() {
        return flinkDir().resolve("conf");
    }

    public Path sparkDir() {
        return root().resolve("spark");
    }

    /** spark-defaults.conf: owner-only, it holds the cluster's authentication secret. */
    public Path sparkProperties() {
        return sparkDir().resolve("conf").resolve("spark-defaults.conf");
    }

    /** A SPARK_HOME made of links to the Maven classpath's jars, from which the Worker starts its executors. */
    public Path sparkHome() {
        return sparkDir().resolve("home");
    }

    /** The Worker's work directory: one directory per application and executor, with the executors' logs. */
    public Path sparkWork() {
        return sparkDir().resolve("work");
    }

    public Path pidFile(String process) {
        return root().resolve(process + ".pid");
    }

    public Path log(String process) {
        return stack.logs().resolve(process + ".log");
    }
}
