package dev.recount.stack;

import dev.recount.core.cli.OldName;
import dev.recount.core.cli.WaitOption;
import dev.recount.core.cli.WaitsFor;
import dev.recount.core.config.RecountConfig;
import dev.recount.stack.cluster.LocalClusters;
import dev.recount.stack.embedded.EmbeddedStack;
import dev.recount.stack.embedded.StackLayout;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(
        name = "up",
        mixinStandardHelpOptions = true,
        description = {
            "Start the local stack: a Kafka broker (KRaft) and a PostgreSQL, each in its own process, with their data under the home directory.",
            "Creates the topics, the database and the schema (Flyway migrations), a login per component (passwords "
                    + "in <home>/secrets), and writes <home>/local.env. "
                    + "Returns when both answer. Harmless when the stack already runs; recovers from a run that was killed.",
            "With --cluster, also a Flink standalone session cluster (a JobManager and two TaskManagers) and a Spark "
                    + "standalone cluster (a Master and a Worker), each process its own JVM on 127.0.0.1, for "
                    + "`stream --cluster` and `backfill --cluster`; processes a kill took are started again."
        })
@WaitsFor(value = "both services to answer", byDefault = "2m")
@OldName(name = "--timeout", now = "--wait")
final class UpCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    StackOptions stack;

    @Option(
            names = "--partitions",
            paramLabel = "N",
            description =
                    "Partitions of the input, dead-letter and backfill topics when they are created (default: topics.input-partitions, 3).")
    Integer partitions;

    @Option(
            names = "--kafka-port",
            paramLabel = "PORT",
            description =
                    "Kafka's port on 127.0.0.1 (default: local.kafka-port; 0 = the previous run's if free, else any free port).")
    Integer kafkaPort;

    @Option(
            names = "--postgres-port",
            paramLabel = "PORT",
            description =
                    "PostgreSQL's port on 127.0.0.1 (default: local.postgres-port; 0 = the previous run's if free, else any free port).")
    Integer postgresPort;

    @Mixin
    WaitOption waitOption;

    @Option(
            names = "--cluster",
            description =
                    "Also start the local Flink and Spark standalone clusters (see docs/operations.md, \"Standalone clusters\").")
    boolean cluster;

    @Override
    public Integer call() {
        if (partitions != null && partitions < 1) throw invalid("--partitions must be at least 1, got " + partitions);
        checkPort("--kafka-port", kafkaPort);
        checkPort("--postgres-port", postgresPort);
        Duration wait = waitOption.duration();
        RecountConfig config = stack.config()
                .with("topics.input-partitions", partitions == null ? null : partitions.toString())
                .with("local.kafka-port", kafkaPort == null ? null : kafkaPort.toString())
                .with("local.postgres-port", postgresPort == null ? null : postgresPort.toString());
        StackLayout layout = stack.layout(config);
        PrintWriter out = spec.commandLine().getOut();
        LocalStackControl.Up up = new LocalStackControl(layout, line -> {
                    out.println(line);
                    out.flush();
                })
                .up(config, wait, cluster);
        EmbeddedStack.UpResult result = up.stack();

        out.println(
                result.wasRunning()
                        ? "the recount local stack is already running in " + layout.home() + "; nothing to start"
                        : "the recount local stack is up in " + layout.home());
        StatusPrinter.print(out, result.status());
        StringJoiner topics = new StringJoiner(", ");
        result.topics().forEach((name, n) -> topics.add(name + " (" + n + " partitions)"));
        out.printf("  %-18s %s%n", "topics", topics);
        String schema = config.adminPostgres().schema();
        out.printf("  %-18s %s at version %s%n", "schema", schema, result.schemaVersion());
        StringJoiner logins = new StringJoiner(", ");
        result.logins().values().forEach(logins::add);
        out.printf("  %-18s %s (passwords in %s)%n", "component logins", logins, layout.passwordDir());
        up.clusters().ifPresent(clustersUp -> {
            out.println(
                    clustersUp.started().isEmpty()
                            ? "the local clusters are already running"
                            : "the local clusters are up");
            StatusPrinter.printClusters(out, new LocalClusters(layout));
        });
        result.notes().forEach(n -> out.println("note: " + n));
        out.println("use it from a shell: . " + layout.envFile() + " && psql");
        return 0;
    }

    private void checkPort(String option, Integer port) {
        if (port != null && (port < 0 || port > 65535))
            throw invalid(option + " must be between 0 and 65535, got " + port);
    }

    private ParameterException invalid(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
