package dev.recount.deploy;

import dev.recount.deploy.cluster.LocalClusters;
import dev.recount.deploy.local.LocalEnvFile;
import picocli.CommandLine.Option;

import dev.recount.core.config.RecountConfig;
import dev.recount.deploy.local.EmbeddedStack;
import dev.recount.deploy.local.StackLayout;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "down", mixinStandardHelpOptions = true,
        description = {"Stop the local stack: the Kafka broker with a controlled shutdown, PostgreSQL with pg_ctl stop (fast). "
                + "The data stays under the home directory for the next `up`. Exit 0 also when nothing runs.",
                "The local Flink and Spark clusters (`up --cluster`) stop first; with --cluster only they stop."})
final class DownCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    StackOptions stack;

    @Option(names = "--cluster", description = "Stop only the local Flink and Spark clusters; Kafka and PostgreSQL keep running.")
    boolean clusterOnly;

    @Override
    public Integer call() {
        RecountConfig config = stack.config();
        StackLayout layout = stack.layout(config);
        PrintWriter out = spec.commandLine().getOut();
        LocalClusters clusters = new LocalClusters(layout);
        if (clusters.configured()) {
            List<String> stoppedClusters = clusters.down();
            if (!stoppedClusters.isEmpty()) out.println("stopped the " + String.join(", ", stoppedClusters));
            if (java.nio.file.Files.exists(layout.envFile())) {
                java.util.Map<String, String> env = new java.util.LinkedHashMap<>(LocalEnvFile.read(layout.envFile()));
                env.keySet().removeAll(clusters.environment().keySet());
                LocalEnvFile.write(layout.envFile(), env);
            }
            if (clusterOnly) return 0;
        } else if (clusterOnly) {
            out.println("no local clusters in " + layout.home());
            return 0;
        }
        List<String> stopped = new EmbeddedStack(layout, line -> {
            out.println(line);
            out.flush();
        }).down();
        if (stopped.isEmpty()) {
            out.println("nothing was running in " + layout.home());
        } else {
            out.println("stopped " + String.join(" and ", stopped) + " in " + layout.home() + "; the data is kept for the next `up`");
        }
        return 0;
    }
}
