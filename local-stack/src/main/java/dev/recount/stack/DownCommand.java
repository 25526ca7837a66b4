package dev.recount.stack;

import dev.recount.core.cli.OldName;
import dev.recount.core.config.RecountConfig;
import dev.recount.stack.embedded.StackLayout;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "down",
        mixinStandardHelpOptions = true,
        description = {
            "Stop the local stack: the Kafka broker with a controlled shutdown, PostgreSQL with pg_ctl stop (fast). "
                    + "The data stays under the home directory for the next `up`. Exit 0 also when nothing runs.",
            "The local Flink and Spark clusters (`up --cluster`) stop first; with --clusters-only only they stop."
        })
// In the local stack's commands --cluster means "the local clusters too" (up); stopping only them is its own option.
@OldName(name = "--cluster", now = "--clusters-only")
final class DownCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    StackOptions stack;

    @Option(
            names = "--clusters-only",
            description = "Stop only the local Flink and Spark clusters; Kafka and PostgreSQL keep running.")
    boolean clusterOnly;

    @Override
    public Integer call() {
        RecountConfig config = stack.config();
        StackLayout layout = stack.layout(config);
        PrintWriter out = spec.commandLine().getOut();
        LocalStackControl.Down down = new LocalStackControl(layout, line -> {
                    out.println(line);
                    out.flush();
                })
                .down(clusterOnly);
        if (!down.clusters().isEmpty()) out.println("stopped the " + String.join(", ", down.clusters()));
        if (clusterOnly) {
            if (!down.clustersConfigured()) out.println("no local clusters in " + layout.home());
            return 0;
        }
        List<String> stopped = down.services();
        if (stopped.isEmpty()) {
            out.println("nothing was running in " + layout.home());
        } else {
            out.println("stopped " + String.join(" and ", stopped) + " in " + layout.home()
                    + "; the data is kept for the next `up`");
        }
        return 0;
    }
}
