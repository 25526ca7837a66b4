package dev.recount.reconcile;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.cli.RecountCli;
import dev.recount.core.config.RecountConfig;
import dev.recount.reconcile.report.ReportWriter;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ./recount reports}: the reconciliation reports on disk, and the one in force per range. No database needed. */
@Command(
        name = "reports",
        sortOptions = false,
        description = {
            "List the reconciliation reports under reconcile.report-dir (oldest first), then the latest"
                    + " per range: the newest report that applied its corrections (a range only dry runs covered: its"
                    + " newest dry run).",
            "A report directory whose summary.json cannot be read is named on stderr and left out."
        })
public final class ReportsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--report-dir",
            paramLabel = "DIR",
            description = "Where the reports are (default: reconcile.report-dir).")
    Path reportDir;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file (default: $RECOUNT_CONFIG, else built-in defaults).")
    Path configFile;

    @Mixin
    JsonOutput json;

    private final CommandEnvironment env;

    public ReportsCommand(CommandEnvironment env) {
        this.env = env;
    }

    public static void main(String[] args) {
        System.exit(RecountCli.execute(commandLine(), args));
    }

    /** The command line users get. */
    public static CommandLine commandLine() {
        return commandLine(CommandEnvironment.system());
    }

    static CommandLine commandLine(CommandEnvironment env) {
        return RecountCli.single(CommandLine.defaultFactory(), new ReportsCommand(env))
                .commandLine();
    }

    @Override
    public Integer call() throws Exception {
        CommandLine cmd = spec.commandLine();
        Path root = reportDir;
        if (root == null) {
            RecountConfig config = env.config(cmd, configFile);
            root = Path.of(config.get("reconcile.report-dir"));
        }
        ReportIndex index = ReportIndex.read(root);
        PrintWriter out = cmd.getOut();
        for (ReportIndex.Unreadable u : index.unreadable) {
            cmd.getErr().println(RecountCli.path(spec) + ": skipped " + u.dir() + ": " + u.reason());
        }
        if (json.enabled()) {
            ObjectNode o = JsonOutput.object().put("report_dir", root.toString());
            ArrayNode all = o.putArray("reports");
            index.reports.forEach(r -> json(all.addObject(), r));
            ArrayNode latest = o.putArray("latest");
            index.latestPerRange().forEach(r -> json(latest.addObject(), r));
            JsonOutput.print(out, o);
            return 0;
        }
        if (index.reports.isEmpty()) {
            out.println("no reports in " + root);
            return 0;
        }
        out.println("reports in " + root + " (oldest first):");
        for (ReportIndex.Report r : index.reports) out.println("  " + line(r));
        out.println("latest per range:");
        for (ReportIndex.Report r : index.latestPerRange()) out.println("  " + line(r));
        return 0;
    }

    /** A report as --json prints it: the facts of its line. */
    private static void json(ObjectNode o, ReportIndex.Report r) {
        o.put("from", r.from().toString()).put("to", r.to().toString()).put("run_id", r.runId());
        o.put("verdict", r.verdict()).put("dry_run", r.dryRun());
        ObjectNode sets = o.putObject("sets");
        r.sets().forEach(sets::put);
        o.put("generated_at", String.valueOf(r.generatedAt()));
        o.put("report", r.dir().resolve(ReportWriter.HTML).toString());
    }

    /** A report's line; a run of several metric sets (or another than the default) also names each set's verdict. */
    private static String line(ReportIndex.Report r) {
        StringBuilder sets = new StringBuilder();
        if (!r.defaultSetOnly()) {
            r.sets()
                    .forEach((set, verdict) -> sets.append(sets.length() == 0 ? " (" : ", ")
                            .append(set)
                            .append(' ')
                            .append(verdict));
            sets.append(')');
        }
        return String.format(
                "%s  run %d  %s%s%s  generated %s  %s",
                r.range(),
                r.runId(),
                r.verdict(),
                sets,
                r.dryRun() ? " (dry run)" : "",
                r.generatedAt(),
                r.dir().resolve(ReportWriter.HTML));
    }
}
