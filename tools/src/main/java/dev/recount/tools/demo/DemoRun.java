package dev.recount.tools.demo;

import dev.recount.core.cli.ExitCode;
import dev.recount.core.config.Durations;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.Instants;
import dev.recount.core.config.LocalEnvFile;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.stack.LocalStackControl;
import dev.recount.stack.embedded.StackLayout;
import dev.recount.tools.generate.Progress;
import dev.recount.tools.generate.TrafficProfile;
import dev.recount.tools.generate.TrafficRun;
import dev.recount.tools.generate.TrafficShape;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The steps of {@code ./recount demo}, in order, each printing one progress line: bring up the stack, reset the demo's
 * workspace ({@link DemoWorkspace}), start the streaming job ({@link DemoStream}), generate traffic, wait for the
 * windows to close, run {@code correct} once (the windows the too-late events named become final within minutes),
 * backfill and reconcile the whole range (what the nightly run does), summarise ({@link DemoSummary}: per metric set,
 * what is served against the oracle's truth of the records sent), and stop what the demo started. The stack and the
 * generator are called through their Java APIs; the streaming job, the backfill and the reconciliation run through
 * the launcher, each in its own JVM (Flink and Spark never share one). Every step counts the demo's metric sets
 * ({@link DemoWorkspace#METRIC_SETS}); the run fails when a set serves anything but its truth.
 */
final class DemoRun {
    private static final int STEPS = 8;

    private static final Duration STACK_TIMEOUT = Duration.ofMinutes(2);

    record Options(
            Path home,
            long events,
            String span,
            double rate,
            long seed,
            String start,
            String idleness,
            boolean keep,
            Path config) {}

    /**
     * The demo's event-time range: {@code [start, end)} is reconciled, aligned to every set's window; the generator's
     * main range {@code [start, mainEnd)} lies in it, and its thin tail closes the range's last windows.
     */
    record Range(Instant start, Instant mainEnd, Instant end, Duration span, Duration tail) {}

    private final Options o;
    private final PrintWriter out;
    private final Path root;
    private final Path launcher;
    private int step;

    DemoRun(Options o, PrintWriter out) {
        this.o = o;
        this.out = out;
        String root = System.getenv("RECOUNT_ROOT");
        if (root == null || root.isBlank()) {
            throw new IllegalArgumentException("run the demo through the launcher: ./recount demo");
        }
        this.root = Path.of(root);
        this.launcher = this.root.resolve("recount");
    }

    int run() throws Exception {
        RecountConfig base = RecountConfig.fromEnvironment(o.config());
        StackLayout layout =
                new StackLayout((o.home() != null ? o.home() : Path.of(base.get("local.home"))).toAbsolutePath());
        // The stack's own progress lines stay out of the demo's: one line per step.
        LocalStackControl stack = new LocalStackControl(layout, line -> {});
        DemoWorkspace workspace = new DemoWorkspace(layout);

        progress("starting the local stack (Kafka + PostgreSQL) in " + layout.home());
        boolean startedStack = !stack.up(base, STACK_TIMEOUT, false).wasRunning();
        Map<String, String> env = LocalEnvFile.read(layout.envFile());

        progress("resetting the demo workspace: topics " + DemoWorkspace.INPUT + "*, schema " + DemoWorkspace.SCHEMA
                + ", " + workspace.dir());
        Path configFile = workspace.writeConfig(env, o.idleness(), root.resolve(DemoWorkspace.METRIC_SETS));
        RecountConfig cfg = RecountConfig.load(configFile, env);
        MetricSets sets = MetricSets.fromConfig(cfg);
        workspace.reset(env, sets);
        Range range = range(cfg.eventTime(), sets.longestWindow());

        progress("starting the streaming job (log: " + workspace.log("stream") + ")");
        DemoStream stream = DemoStream.start(launcher, env, workspace.log("stream"), configFile);
        boolean streamKept = false;
        DemoSummary summary;
        try {
            String webUi = stream.awaitRunning();
            out.println("      Flink Web UI: " + webUi);

            progress("generating " + o.events() + " events over " + Durations.format(range.span())
                    + " of event time from " + range.start() + " at " + (long) o.rate()
                    + " records/s, with late, duplicate and invalid records");
            TrafficRun.Result generated = generate(cfg, sets, range, workspace);

            Instant closed = range.end().plus(cfg.eventTime().allowedLateness());
            progress("waiting until the watermark passes " + closed
                    + " (last window end + allowed lateness) and the job has read every record");
            stream.awaitWindowsClosed(env, closed, out);
            if (o.keep()) {
                streamKept = true;
            } else {
                stream.stop();
            }

            progress("correct: recomputing from the lake the windows the too-late events named, and reconciling"
                    + " exactly those (log: " + workspace.log("correct") + ")");
            Instant closedAt = Instant.now();
            correct(env, workspace);
            Duration correctedAfter = Duration.between(closedAt, Instant.now());
            List<String> finalKeys = new ArrayList<>();
            for (MetricSet set : sets.sets()) {
                String view = DemoSummary.servedName(set.name());
                finalKeys.add(DemoConnections.finalWindowKeys(env, view, range.start(), range.end()) + " in " + view);
            }
            out.println("      window keys final with their too-late events counted: " + String.join(", ", finalKeys)
                    + ", " + Durations.format(correctedAfter.truncatedTo(ChronoUnit.SECONDS)) + " after the stream"
                    + " had read every record (scheduled every few minutes, `correct` keeps late windows that fresh)");

            progress("backfill range [" + range.start() + ", " + range.end() + ") of every set from the lake (log: "
                    + workspace.log("backfill") + ")");
            backfill(env, range, workspace);

            progress(
                    "reconcile [" + range.start() + ", " + range.end() + ") (log: " + workspace.log("reconcile") + ")");
            int reconcile = reconcile(env, range, workspace);

            summary = DemoSummary.collect(env, sets, range.start(), range.end(), generated);
            summary.print(
                    out,
                    reconcile == 0
                            ? "within tolerance"
                            : "beyond tolerance (the stream missed too-late events; the batch values are now served)",
                    cfg.attribution().window(),
                    workspace.newestReport(),
                    webUi,
                    streamKept,
                    lookYourself(layout, !o.keep() && startedStack));
        } finally {
            if (!streamKept) stream.stop();
        }
        finish(stack, startedStack, streamKept ? stream.pid() : -1);
        if (!summary.finalEqualsTruth()) {
            throw new IllegalStateException("what is served differs from the oracle's truth of the records sent for "
                    + summary.sets().stream()
                            .filter(s -> !s.finalEqualsTruth())
                            .map(DemoSummary.SetSummary::name)
                            .toList()
                    + " (see the summary above)");
        }
        return 0;
    }

    private void progress(String line) {
        out.printf("[%d/%d] %s%n", ++step, STEPS, line);
        out.flush();
    }

    /** From --start, else ending far enough back that every window, tail included, has closed by now. */
    private Range range(EventTimeSettings time, Duration longestWindow) {
        Duration span = Durations.parse(o.span());
        Duration closing = TrafficShape.closingTail(time);
        Instant requested = o.start() != null
                ? Instants.parseInstant(o.start())
                : TrafficShape.startClosedBy(Instant.now(), span, closing.plus(longestWindow));
        return range(requested, span, longestWindow, closing);
    }

    /**
     * The range of {@code span} from {@code requested}, widened to whole windows of the longest set window (a backfill
     * or reconciliation range must hold whole windows of every set), and the tail that closes its last windows: up to
     * the range's end, then {@code closing}.
     */
    static Range range(Instant requested, Duration span, Duration longestWindow, Duration closing) {
        long size = longestWindow.toMillis();
        Instant start = Instant.ofEpochMilli(Math.floorDiv(requested.toEpochMilli(), size) * size);
        Instant mainEnd = start.plus(span);
        Instant end = Instant.ofEpochMilli(-Math.floorDiv(-mainEnd.toEpochMilli(), size) * size);
        return new Range(
                start, mainEnd, end, span, Duration.between(mainEnd, end).plus(closing));
    }

    /**
     * The generator's traffic (its default shape, with the sets' attributes) to the demo's input topic; returns what
     * it sent and the oracle's truth of it.
     */
    private TrafficRun.Result generate(RecountConfig cfg, MetricSets sets, Range range, DemoWorkspace workspace)
            throws Exception {
        TrafficProfile profile = TrafficShape.defaults()
                .profile(
                        cfg.eventTime(),
                        range.start(),
                        range.span(),
                        range.tail(),
                        o.events(),
                        o.seed(),
                        DemoWorkspace.PARTITIONS,
                        sets.attributes());
        // The generator's own progress lines stay out of the demo's, as the stack's do.
        Progress quiet = new Progress(new PrintWriter(Writer.nullWriter()), "generate");
        return TrafficRun.toKafka(cfg, profile, DemoWorkspace.INPUT, o.rate(), workspace.truthDir(), quiet);
    }

    private void backfill(Map<String, String> env, Range range, DemoWorkspace workspace) throws Exception {
        launch(
                env,
                workspace,
                "backfill",
                Duration.ofMinutes(5),
                false,
                "range",
                "--from",
                range.start().toString(),
                "--to",
                range.end().toString(),
                "--config",
                workspace.configFile().toString());
    }

    /**
     * One {@code ./recount correct}: {@code backfill affected}, then a reconcile of exactly the windows it recomputed. Beyond
     * tolerance is expected (the stream missed the too-late events: that is what it corrects).
     */
    private void correct(Map<String, String> env, DemoWorkspace workspace) throws Exception {
        launch(
                env,
                workspace,
                "correct",
                Duration.ofMinutes(5),
                true,
                "--config",
                workspace.configFile().toString(),
                "--report-dir",
                workspace.reportDir().toString());
    }

    /** @return reconcile's exit code: 0, or {@link ExitCode#BEYOND_TOLERANCE} (the demo's too-late events) */
    private int reconcile(Map<String, String> env, Range range, DemoWorkspace workspace) throws Exception {
        return launch(
                env,
                workspace,
                "reconcile",
                Duration.ofMinutes(3),
                true,
                "--from",
                range.start().toString(),
                "--to",
                range.end().toString(),
                "--config",
                workspace.configFile().toString(),
                "--report-dir",
                workspace.reportDir().toString());
    }

    /**
     * {@code ./recount <command> <args>} in its own JVM, logged to the workspace's {@code <command>.log}; fails unless
     * it exits 0 (or {@link ExitCode#BEYOND_TOLERANCE} when {@code beyondToleranceIsFine}).
     */
    private int launch(
            Map<String, String> env,
            DemoWorkspace workspace,
            String command,
            Duration timeout,
            boolean beyondToleranceIsFine,
            String... args)
            throws Exception {
        Path log = workspace.log(command);
        String[] commandLine = new String[args.length + 1];
        commandLine[0] = command;
        System.arraycopy(args, 0, commandLine, 1, args.length);
        int exit = ChildProcess.start(launcher, env, log, commandLine).await(timeout);
        if (exit != 0 && !(beyondToleranceIsFine && exit == ExitCode.BEYOND_TOLERANCE.code())) {
            throw new IllegalStateException(command + " exited " + exit + "; see " + log);
        }
        return exit;
    }

    /** Leaves running what --keep asks for, stops the stack the demo started, and says which it did. */
    private void finish(LocalStackControl stack, boolean startedStack, long keptStreamPid) {
        StackLayout layout = stack.layout();
        if (o.keep()) {
            out.println("The stack keeps running (--keep). Stop it with: ./recount down" + homeFlag(layout)
                    + (keptStreamPid > 0
                            ? "; stop the streaming job first with: kill " + keptStreamPid
                                    + " (a clean stop: it takes a savepoint)"
                            : ""));
        } else if (startedStack) {
            stack.down(false);
            out.println("Stopped the local stack this demo started (use --keep to leave it running).");
        } else {
            out.println("The local stack was already running and stays up. Stop it with: ./recount down"
                    + homeFlag(layout));
        }
        out.flush();
    }

    /**
     * How to look at the served rows yourself, as a line that works when pasted: the stack's local.env by its absolute
     * path; when the demo stops the stack it started, bringing it up again first (its data stays in the home).
     */
    static String lookYourself(StackLayout layout, boolean stackStopped) {
        String query = ". " + layout.envFile().toAbsolutePath() + " && psql -c 'SELECT * FROM " + DemoWorkspace.SCHEMA
                + ".window_metrics LIMIT 10'";
        return stackStopped ? "./recount up" + homeFlag(layout) + " && " + query : query;
    }

    private static String homeFlag(StackLayout layout) {
        return layout.home().equals(Path.of(".recount").toAbsolutePath()) ? "" : " --home " + layout.home();
    }
}
