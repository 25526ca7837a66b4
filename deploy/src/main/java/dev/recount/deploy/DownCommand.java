package dev.recount.deploy;

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
                + "The data stays under the home directory for the next `up`. Exit 0 also when nothing runs."})
final class DownCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    StackOptions stack;

    @Override
    public Integer call() {
        RecountConfig config = stack.config();
        StackLayout layout = stack.layout(config);
        PrintWriter out = spec.commandLine().getOut();
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
