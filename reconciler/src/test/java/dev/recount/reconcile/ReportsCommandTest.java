package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.cli.RecountCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code reports} on a report directory of fixed summaries: the listing, the latest per range, bad entries. */
class ReportsCommandTest {
    static final String DAY1_FROM = "2026-11-27T00:00:00Z";
    static final String DAY1_TO = "2026-11-28T00:00:00Z";
    static final String DAY2_FROM = "2026-11-28T00:00:00Z";
    static final String DAY2_TO = "2026-11-29T00:00:00Z";

    @TempDir
    Path reports;

    String out;
    String err;

    int run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        CommandEnvironment env =
                new CommandEnvironment(Map.of(), Clock.fixed(Instant.parse("2026-11-29T06:00:00Z"), ZoneOffset.UTC));
        int code = RecountCli.execute(ReportsCommand.commandLine(env), new PrintWriter(o), new PrintWriter(e), args);
        out = o.toString();
        err = e.toString();
        return code;
    }

    /** A report directory as the reconciler writes it, with the fields {@code reports} reads. */
    Path report(String dir, long runId, boolean dryRun, String from, String to, String verdict, String generatedAt)
            throws Exception {
        Path d = Files.createDirectories(reports.resolve(dir));
        Files.writeString(
                d.resolve("summary.json"),
                String.format(
                        "{\"run_id\":%d,\"dry_run\":%b,\"scope\":{\"label\":\"x\",\"from\":\"%s\",\"to\":\"%s\"},"
                                + "\"verdict\":\"%s\",\"generated_at\":\"%s\"}",
                        runId, dryRun, from, to, verdict, generatedAt));
        return d;
    }

    @Test
    void jsonIsOneObjectOfTheSameFacts() throws Exception {
        report("run-3-20261128T000000Z", 3, false, DAY2_FROM, DAY2_TO, "beyond_tolerance", "2026-11-29T01:00:00Z");
        report("run-4-20261128T000000Z", 4, true, DAY2_FROM, DAY2_TO, "within_tolerance", "2026-11-29T02:00:00Z");

        assertThat(run("--report-dir", reports.toString(), "--json")).isZero();
        assertThat(err).isEmpty();
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out);
        assertThat(out.strip()).doesNotContain("\n");
        assertThat(json.get("report_dir").asText()).isEqualTo(reports.toString());
        assertThat(json.get("reports")).hasSize(2);
        assertThat(json.get("reports").get(1).get("run_id").asLong()).isEqualTo(4);
        assertThat(json.get("reports").get(1).get("dry_run").asBoolean()).isTrue();
        assertThat(json.get("latest")).hasSize(1);
        assertThat(json.get("latest").get(0).get("run_id").asLong()).isEqualTo(3);
        assertThat(json.get("latest").get(0).get("from").asText()).isEqualTo(DAY2_FROM);
        assertThat(json.get("latest").get(0).get("report").asText()).endsWith("run-3-20261128T000000Z/report.html");
    }

    @Test
    void listsEveryReportThenTheOneInForcePerRange() throws Exception {
        report("run-3-20261128T000000Z", 3, false, DAY2_FROM, DAY2_TO, "beyond_tolerance", "2026-11-29T01:00:00Z");
        report("run-1-20261127T000000Z", 1, false, DAY1_FROM, DAY1_TO, "within_tolerance", "2026-11-28T01:00:00Z");
        report("run-4-20261128T000000Z", 4, true, DAY2_FROM, DAY2_TO, "within_tolerance", "2026-11-29T02:00:00Z");
        // A newer database started its run ids again: run 2 is the latest report of day 1 by time.
        report("run-2-20261127T000000Z-2", 2, false, DAY1_FROM, DAY1_TO, "within_tolerance", "2026-11-29T03:00:00Z");
        Files.createDirectories(reports.resolve("run-5-20261128T000000Z.partial"));

        assertThat(run("--report-dir", reports.toString())).isZero();
        assertThat(err).isEmpty();
        String[] lines = out.strip().split("\\R");
        assertThat(lines).hasSize(8);
        assertThat(lines[0]).isEqualTo("reports in " + reports + " (oldest first):");
        assertThat(lines[1]).contains("run 1 ");
        assertThat(lines[2]).contains("run 3 ");
        assertThat(lines[3]).contains("run 4 ", "(dry run)");
        assertThat(lines[4]).contains("run 2 ");
        assertThat(lines[5]).isEqualTo("latest per range:");
        assertThat(lines[6])
                .startsWith("  [" + DAY1_FROM + ", " + DAY1_TO
                        + ")  run 2  within_tolerance  generated 2026-11-29T03:00:00Z")
                .endsWith("run-2-20261127T000000Z-2/report.html");
        // Day 2's newest is a dry run: the report in force is the applied run 3.
        assertThat(lines[7]).startsWith("  [" + DAY2_FROM + ", " + DAY2_TO + ")  run 3  beyond_tolerance  generated");
    }

    @Test
    void aRangeOnlyADryRunCoveredShowsThatDryRun() throws Exception {
        report("run-7-20261128T000000Z", 7, true, DAY2_FROM, DAY2_TO, "within_tolerance", "2026-11-29T02:00:00Z");
        assertThat(run("--report-dir", reports.toString())).isZero();
        assertThat(out.strip().lines().reduce((a, b) -> b).orElseThrow()).contains("run 7", "(dry run)");
    }

    @Test
    void anUnreadableSummaryIsNamedOnStderrAndLeftOut() throws Exception {
        report("run-1-20261127T000000Z", 1, false, DAY1_FROM, DAY1_TO, "within_tolerance", "2026-11-28T01:00:00Z");
        Path broken = Files.createDirectories(reports.resolve("run-2-20261128T000000Z"));
        Files.writeString(broken.resolve("summary.json"), "{\"run_id\": 2, ");
        Files.createDirectories(reports.resolve("run-3-20261128T000000Z"));

        assertThat(run("--report-dir", reports.toString())).isZero();
        assertThat(err.strip().lines())
                .hasSize(2)
                .anySatisfy(l ->
                        assertThat(l).startsWith("recount reports: skipped ").contains("run-2-"))
                .anySatisfy(l -> assertThat(l).contains("run-3-", "no summary.json"));
        assertThat(out).contains("run 1 ").doesNotContain("run 2 ");
    }

    @Test
    void aRunOfSeveralSetsShowsEachSetsVerdictAndTheSetsItCouldNotReconcile() throws Exception {
        Path d = Files.createDirectories(reports.resolve("run-9-20261128T000000Z"));
        Files.writeString(
                d.resolve("summary.json"),
                "{\"run_id\":9,\"dry_run\":false,\"scope\":{\"from\":\"" + DAY2_FROM + "\",\"to\":\"" + DAY2_TO
                        + "\"},\"verdict\":\"beyond_tolerance\",\"generated_at\":\"2026-11-29T01:00:00Z\","
                        + "\"metric_sets\":[\"default\",\"campaign_slot\"],"
                        + "\"not_covered\":{\"channel_country\":\"no succeeded batch run of ...\"},"
                        + "\"sets\":{\"default\":{\"verdict\":\"within_tolerance\"},"
                        + "\"campaign_slot\":{\"verdict\":\"beyond_tolerance\"}}}");
        // A run of the default set alone (or from before metric sets) reads as it always did.
        Path alone = Files.createDirectories(reports.resolve("run-8-20261127T000000Z"));
        Files.writeString(
                alone.resolve("summary.json"),
                "{\"run_id\":8,\"dry_run\":false,\"scope\":{\"from\":\"" + DAY1_FROM + "\",\"to\":\"" + DAY1_TO
                        + "\"},\"verdict\":\"within_tolerance\",\"generated_at\":\"2026-11-28T01:00:00Z\","
                        + "\"sets\":{\"default\":{\"verdict\":\"within_tolerance\"}}}");

        assertThat(run("--report-dir", reports.toString())).isZero();
        assertThat(out)
                .contains("run 9  beyond_tolerance (default within_tolerance, campaign_slot beyond_tolerance,"
                        + " channel_country not reconciled)  generated 2026-11-29T01:00:00Z")
                .contains("run 8  within_tolerance  generated 2026-11-28T01:00:00Z");
    }

    @Test
    void noReportsIsNotAnError() {
        assertThat(run("--report-dir", reports.resolve("absent").toString())).isZero();
        assertThat(out.strip()).isEqualTo("no reports in " + reports.resolve("absent"));
    }

    @Test
    void theReportDirComesFromTheSettings() throws Exception {
        report("run-1-20261127T000000Z", 1, false, DAY1_FROM, DAY1_TO, "within_tolerance", "2026-11-28T01:00:00Z");
        Path config = reports.resolve("recount.properties");
        Files.writeString(config, "reconcile.report-dir=" + reports + "\n");
        assertThat(run("--config", config.toString())).isZero();
        assertThat(out).contains("run 1 ");
    }

    @Test
    void usageErrorsAndVersion() {
        assertThat(run("--report-dri", "x")).isEqualTo(2);
        assertThat(err.strip())
                .startsWith("recount reports: Unknown options: '--report-dri'")
                .endsWith("(see recount reports --help)");
        assertThat(run("--version")).isZero();
        assertThat(out.strip()).matches("recount \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    }
}
