package dev.recount.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * Prints the results table of bench/run.sh and writes it, with the commands that produced it, the commit they ran
 * on and the machine, to a file of its own under bench/results/. Args: results.tsv runDir results.md [commands.tsv].
 *
 * <p>One file per run directory: a run that adds sections to an earlier run's directory ({@code BENCH_OUT}) rewrites
 * that run's file, whose results.tsv then holds every section's rows and whose commands.tsv every invocation. The
 * harness never writes to docs/: docs/benchmarks.md is written by hand and names the run behind each figure.
 */
public final class Report {
    private Report() {}

    public static void main(String[] args) throws Exception {
        List<String> rows = Files.readAllLines(Path.of(args[0]));
        String runDir = Path.of(args[1]).getFileName().toString();
        Path file = Path.of(args[2]);
        List<String> commands =
                args.length > 3 && Files.exists(Path.of(args[3])) ? Files.readAllLines(Path.of(args[3])) : List.of();
        String report = render(runDir, Instant.now(), commands, machine(), rows);
        System.out.print(report);
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, report);
        System.out.println("written to " + file);
    }

    /**
     * The run's Markdown. {@code commands} are bench/run.sh's invocations, each "commit TAB command line" as the
     * script records them; {@code rows} its results, each "name TAB value TAB unit TAB note".
     */
    static String render(String runDir, Instant finishedAt, List<String> commands, String machine, List<String> rows) {
        StringBuilder t = new StringBuilder();
        t.append("# Benchmark run ").append(runDir).append("\n\n");
        t.append("Run ")
                .append(finishedAt)
                .append(" (raw logs: `")
                .append(runDir)
                .append("` under bench/target)\n\n");
        if (!commands.isEmpty()) {
            t.append("Commands:\n\n");
            for (String c : commands) {
                if (c.isBlank()) continue;
                String[] f = c.split("\t", 2);
                t.append("- `")
                        .append(f.length > 1 ? f[1] : f[0])
                        .append("`")
                        .append(f.length > 1 ? " on commit " + f[0] : "")
                        .append('\n');
            }
            t.append('\n');
        }
        t.append("Machine: ").append(machine).append("\n\n");
        t.append("| measure | value | unit | notes |\n|---|---:|---|---|\n");
        for (String r : rows) {
            if (r.isBlank()) continue;
            String[] f = r.split("\t", 4);
            t.append("| ")
                    .append(f[0])
                    .append(" | ")
                    .append(f.length > 1 ? f[1] : "")
                    .append(" | ")
                    .append(f.length > 2 ? f[2] : "")
                    .append(" | ")
                    .append(f.length > 3 ? f[3].replace("|", "/") : "")
                    .append(" |\n");
        }
        return t.toString();
    }

    private static String machine() throws Exception {
        return sh("echo \"nproc $(nproc), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -srm)\"")
                + "; "
                + sh("java -version 2>&1 | head -1")
                + "; load average at the end: "
                + sh("cut -d' ' -f1-3 /proc/loadavg")
                + " ("
                + ManagementFactory.getOperatingSystemMXBean().getAvailableProcessors()
                + " CPUs visible)";
    }

    private static String sh(String command) throws Exception {
        Process p = new ProcessBuilder("bash", "-c", command)
                .redirectErrorStream(true)
                .start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String out = String.join(" ", r.lines().toList()).strip();
            p.waitFor();
            return out;
        }
    }
}
