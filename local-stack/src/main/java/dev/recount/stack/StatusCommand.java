package dev.recount.stack;

import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.ExitsWith;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.config.RecountConfig;
import dev.recount.stack.cluster.LocalClusters;
import dev.recount.stack.embedded.EmbeddedStack;
import dev.recount.stack.embedded.StackLayout;
import dev.recount.stack.embedded.StackStatus;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description =
                "Show what of the local stack runs where: pids, ports, data directories, bootstrap servers, JDBC URL.")
// Its own meanings (--help lists them): a script can tell "stopped" from "half up".
@ExitsWith(code = ExitCode.OK, when = "both Kafka and PostgreSQL run and answer")
@ExitsWith(code = ExitCode.FAILED, when = "status could not be determined (an error)")
@ExitsWith(
        code = ExitCode.PARTLY,
        when = "one service is stopped or does not answer, or some of the local clusters' processes run and others"
                + " do not (one was killed)")
@ExitsWith(code = ExitCode.NOT_RUNNING, when = "nothing runs")
final class StatusCommand implements Callable<Integer> {
    static final int ALL_UP = ExitCode.OK.code();
    static final int NOTHING_RUNS = ExitCode.NOT_RUNNING.code();
    static final int PARTLY_RUNNING = ExitCode.PARTLY.code();

    @Spec
    CommandSpec spec;

    @Mixin
    StackOptions stack;

    @Mixin
    JsonOutput json;

    @Override
    public Integer call() {
        RecountConfig config = stack.config();
        StackLayout layout = stack.layout(config);
        PrintWriter out = spec.commandLine().getOut();
        if (!Files.isDirectory(layout.home())) {
            if (json.enabled()) {
                JsonOutput.print(out, StatusJson.absent(layout.home()));
                return NOTHING_RUNS;
            }
            out.println("no local stack in " + layout.home() + " (`recount up` creates one)");
            return NOTHING_RUNS;
        }
        StackStatus status = new EmbeddedStack(layout, line -> {}).status(true);
        String summary = status.allUp() ? "running" : status.noneRunning() ? "stopped" : "partly running";
        LocalClusters clusters = new LocalClusters(layout);
        if (json.enabled()) {
            JsonOutput.print(
                    out, StatusJson.of(layout.home(), summary, status, clusters.configured() ? clusters : null));
        } else {
            out.println("recount local stack in " + layout.home() + ": " + summary);
            StatusPrinter.print(out, status);
            if (clusters.configured()) StatusPrinter.printClusters(out, clusters);
        }
        boolean clustersPartly = false;
        if (clusters.configured()) {
            // A cluster stopped cleanly (`down --clusters-only`) is not "partly running"; one a kill took is.
            clustersPartly = !clusters.allRunning()
                    && (!clusters.noneRunning()
                            || clusters.status().stream()
                                    .anyMatch(p -> p.stalePid().isPresent()));
        }
        if (status.allUp()) return clustersPartly ? PARTLY_RUNNING : ALL_UP;
        return status.noneRunning() && clusters.noneRunning() ? NOTHING_RUNS : PARTLY_RUNNING;
    }
}
