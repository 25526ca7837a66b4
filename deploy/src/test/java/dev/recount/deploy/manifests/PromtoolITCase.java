package dev.recount.deploy.manifests;

import static dev.recount.deploy.manifests.ManifestsTest.MONITORING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The alert rules and the dashboards' queries through Prometheus's own tool: {@code promtool check rules} parses every
 * expression and template, {@code promtool test rules} evaluates alerts-test.yml's series against alerts.yml. An
 * ITCase because it runs a program outside the JVM; without promtool the build fails and says how to get it.
 */
class PromtoolITCase {
    static final long TIMEOUT_SECONDS = 120;

    @Test
    void alertRulesAreValid() throws Exception {
        promtool("check", "rules", MONITORING.resolve("alerts.yml").toString());
    }

    @Test
    void alertRuleTestsPass() throws Exception {
        promtool("test", "rules", MONITORING.resolve("alerts-test.yml").toString());
    }

    /** Each query as the expression of a recording rule, Grafana's variables replaced by values Prometheus accepts. */
    @Test
    void dashboardQueriesParse(@TempDir Path dir) throws Exception {
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboards\n    rules:\n");
        int n = 0;
        for (Path file : GrafanaDashboards.files()) {
            for (GrafanaDashboards.Query q : GrafanaDashboards.queries(GrafanaDashboards.read(file))) {
                rules.append("      # ")
                        .append(file.getFileName())
                        .append(": ")
                        .append(q.where().replace('\n', ' '))
                        .append('\n')
                        .append("      - record: dashboard:query")
                        .append(n++)
                        .append('\n')
                        .append("        expr: '")
                        .append(asPromQl(q.expr()).replace("'", "''"))
                        .append("'\n");
            }
        }
        assertThat(n).as("dashboard queries").isPositive();
        Path file = dir.resolve("dashboard-queries.yml");
        Files.writeString(file, rules);
        String out = promtool("check", "rules", file.toString());
        assertThat(out).contains("SUCCESS: " + n + " rules found");
    }

    /** Grafana's {@code $__interval}-style variables in ranges become a duration, the others a regex for any value. */
    static String asPromQl(String grafanaExpr) {
        return grafanaExpr.replaceAll("\\$__\\w+", "1m").replaceAll("\\$\\{?\\w+}?", ".*");
    }

    /** Runs promtool; returns its output, or fails with it. */
    static String promtool(String... args) throws IOException, InterruptedException {
        Path promtool = onPath("promtool");
        if (promtool == null) {
            fail(
                    "promtool is not on the PATH: run deploy/bin/install-test-deps (it installs promtool from Debian's prometheus package)");
        }
        List<String> command = new ArrayList<>();
        command.add(promtool.toString());
        command.addAll(List.of(args));
        Path log = Files.createTempFile("promtool", ".log");
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(String.join(" ", command) + " did not finish within " + TIMEOUT_SECONDS + " s");
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(p.exitValue())
                    .as("%s exited with %d:%n%s", String.join(" ", command), p.exitValue(), out)
                    .isZero();
            return out;
        } finally {
            Files.deleteIfExists(log);
        }
    }

    static Path onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) return null;
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            Path candidate = Path.of(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return candidate;
        }
        return null;
    }
}
