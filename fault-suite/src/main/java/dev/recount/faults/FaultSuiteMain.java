package dev.recount.faults;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The whole fault matrix as one command (fault-suite/run.sh runs it after a build): a fresh embedded stack, then
 * every fault {@code --rounds} times, each round a fresh pipeline, and the results written to a file of the run's own
 * under fault-suite/results/ (docs/reliability.md quotes the latest complete run by hand).
 * Exit code 0 only if every round was exact.
 */
@Command(
        name = "fault-suite",
        mixinStandardHelpOptions = true,
        description = "Inject real faults into the real pipeline and check every output against the ground truth.")
public final class FaultSuiteMain implements Callable<Integer> {
    @Option(names = "--rounds", defaultValue = "3", description = "Rounds per fault (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--faults", split = ",", description = "Faults to run (default: all): ${COMPLETION-CANDIDATES}.")
    List<Fault> faults;

    @Option(
            names = "--events",
            defaultValue = "30000",
            description = "Unique valid events per round (default: ${DEFAULT-VALUE}).")
    long events;

    @Option(
            names = "--rate",
            defaultValue = "500",
            description = "Records per second produce sends (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(names = "--work", description = "Directory for the stack and the rounds (default: a new temporary one).")
    Path work;

    @Option(
            names = "--report",
            description = "Markdown file whose generated section gets the results (default: a new "
                    + "fault-suite/results/run-<UTC start time>.md).")
    Path report;

    @Option(names = "--command", hidden = true, defaultValue = "fault-suite/run.sh")
    String command;

    public static void main(String[] args) {
        System.exit(new CommandLine(new FaultSuiteMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = new PrintWriter(System.out, true);
        Instant startedAt = Instant.now();
        Path home = work != null ? Files.createDirectories(work) : Files.createTempDirectory("recount-faults-");
        List<Fault> chosen = faults == null || faults.isEmpty() ? List.of(Fault.values()) : faults;
        out.println("fault suite: " + rounds + " round(s) of " + chosen + " in " + home);
        Stack stack = Stack.start(home.resolve("stack"));
        List<RoundResult> results = new ArrayList<>();
        try {
            int n = 0;
            for (int round = 1; round <= rounds; round++) {
                for (Fault fault : chosen) {
                    n++;
                    Path dir = home.resolve(
                            String.format("round-%02d-%s", n, fault.name().toLowerCase()));
                    try {
                        results.add(
                                new FaultRound(stack, dir, events, rate, 1000L * round + fault.ordinal(), out::println)
                                        .run(fault));
                    } catch (Exception | AssertionError e) {
                        out.println(fault + ": ROUND FAILED TO RUN: " + e);
                        results.add(new RoundResult(
                                fault,
                                0,
                                List.of(),
                                Accounting.Result.notJudged("round did not complete: " + e),
                                List.of("see " + dir),
                                java.time.Duration.ZERO));
                    }
                }
            }
        } finally {
            stack.stop();
        }
        String section = ReliabilityReport.render(results, command, machine(), Instant.now());
        Path doc = report != null
                ? report
                : Launcher.repositoryRoot()
                        .resolve("fault-suite")
                        .resolve("results")
                        .resolve(ReliabilityReport.runFileName(startedAt));
        ReliabilityReport.writeInto(doc, section);
        out.println(section);
        out.println("fault suite: results written to " + doc);
        return results.stream().allMatch(RoundResult::passed) ? 0 : 1;
    }

    private static String machine() {
        return Runtime.getRuntime().availableProcessors() + " cores, "
                + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MiB max heap for the suite, "
                + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", Java "
                + System.getProperty("java.version");
    }
}
