package dev.recount.tools.demo;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ./recount demo}: the whole Lambda loop on generated traffic, on the embedded stack. */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = {
            "Runs the whole pipeline end to end: starts the local stack, a fresh demo workspace (its own topics, schema",
            "`demo`, lake and checkpoints under <home>/demo), the streaming job, a few minutes of generated traffic with",
            "late, duplicate and invalid events, waits until every window has closed, runs `correct` once (the windows",
            "the too-late events named become final), then `backfill range` and `reconcile` over that range, and prints",
            "what happened. Stops what it started unless --keep."
        })
public final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--home", paramLabel = "DIR", description = "Local stack home (default: local.home, `.recount`).")
    Path home;

    @Option(
            names = "--events",
            defaultValue = "60000",
            description = "Valid events in the main range (default: ${DEFAULT-VALUE}).")
    long events;

    @Option(
            names = "--span",
            defaultValue = "5m",
            description = "Event time covered by the main range (default: ${DEFAULT-VALUE}).")
    String span;

    @Option(
            names = "--rate",
            defaultValue = "3000",
            description = "Records per second sent to Kafka (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(names = "--seed", defaultValue = "1", description = "Generator seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--start",
            description =
                    "Event time of the first event, ISO-8601 (default: now floored to the minute, minus the span and tail).")
    String start;

    @Option(
            names = "--idleness",
            defaultValue = "3s",
            description =
                    "Watermark idleness for the demo, short so the quiet partition is seen going idle (default: ${DEFAULT-VALUE}).")
    String idleness;

    @Option(names = "--keep", description = "Leave the local stack and the streaming job running afterwards.")
    boolean keep;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file under the demo's own settings (default: $RECOUNT_CONFIG).")
    Path config;

    @Override
    public Integer call() throws Exception {
        DemoRun.Options o = new DemoRun.Options(home, events, span, rate, seed, start, idleness, keep, config);
        return new DemoRun(o, spec.commandLine().getOut()).run();
    }
}
