package dev.recount.tools.generate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.tools.CommandRun;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code generate --file}, in-process: the metric-sets file in the settings decides the attributes and the truth. */
class GenerateCommandTest {
    static final Path DEMO_SETS = Path.of("../config/demo/metric-sets.yaml").toAbsolutePath();

    @TempDir
    Path tmp;

    Path settings(String... lines) throws Exception {
        Path file = tmp.resolve("settings.properties");
        Files.write(file, List.of(lines));
        return file;
    }

    @Test
    void writesTheTruthOfEveryDeclaredSet() throws Exception {
        Path config = settings("metric-sets.file=" + DEMO_SETS, "attribution.enabled=true");
        Path out = tmp.resolve("traffic.jsonl");
        CommandRun run = CommandRun.of(
                "generate",
                "--file",
                out.toString(),
                "--events",
                "3000",
                "--start",
                "2026-11-29T10:00:00Z",
                "--partitions",
                "3",
                "--seed",
                "5",
                "--config",
                config.toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("generate: set default: ")
                .contains("generate: set campaign_slot: ")
                .contains("generate: set channel_country: ");
        Path truth = Path.of(out + ".truth");
        assertThat(truth.resolve("default.csv")).exists();
        assertThat(truth.resolve("default.attribution.csv")).exists();
        assertThat(truth.resolve("campaign_slot.csv")).exists();
        assertThat(truth.resolve("campaign_slot.attribution.csv")).doesNotExist();
        assertThat(truth.resolve("channel_country.attribution.csv")).exists();
        JsonNode summary =
                new ObjectMapper().readTree(truth.resolve("summary.json").toFile());
        assertThat(summary.at("/sets/default/totals/events").asLong())
                .isEqualTo(summary.get("valid_main").asLong()
                        + summary.get("valid_tail").asLong());
        // The events carry the attributes the sets use (Latin-1: one bad record is not UTF-8, on purpose).
        JsonNode first = new ObjectMapper()
                .readTree(Files.readAllLines(out, StandardCharsets.ISO_8859_1).stream()
                        .filter(l -> l.contains("\"event_type\":\"impression\"") && l.contains("\"ev-"))
                        .findFirst()
                        .orElseThrow());
        assertThat(first.has("slot_id") && first.has("device"))
                .as(first.toString())
                .isTrue();
    }

    @Test
    void withoutAMetricSetsFileTheTruthIsTheDefaultSetsAlone() throws Exception {
        Path out = tmp.resolve("plain.jsonl");
        CommandRun run = CommandRun.of(
                "generate",
                "--file",
                out.toString(),
                "--events",
                "500",
                "--start",
                "2026-11-29T10:00:00Z",
                "--config",
                settings("window.size=1m").toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        try (var files = Files.list(Path.of(out + ".truth"))) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("default.csv", "summary.json");
        }
    }

    @Test
    void aBadMetricSetsFileIsAUsageError() throws Exception {
        Path bad = tmp.resolve("bad.yaml");
        Files.writeString(
                bad,
                "version: 1\nsets:\n  - name: x\n    dimensions: [nowhere]\n    measures:\n"
                        + "      - {name: n, kind: count}\n");
        CommandRun run = CommandRun.of(
                "generate",
                "--file",
                tmp.resolve("g.jsonl").toString(),
                "--config",
                settings("metric-sets.file=" + bad).toString());

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
        assertThat(run.err()).contains("nowhere");
        assertThat(tmp.resolve("g.jsonl")).doesNotExist();
    }

    @Test
    void declaredAttributesTheGeneratorCannotSendAreAUsageError() throws Exception {
        Path sets = tmp.resolve("sets.yaml");
        Files.writeString(
                sets,
                "version: 1\nattributes:\n  browser: {type: string, required: true}\nsets:\n" + "  - name: default\n");
        CommandRun run = CommandRun.of(
                "generate",
                "--file",
                tmp.resolve("g.jsonl").toString(),
                "--config",
                settings("metric-sets.file=" + sets).toString());

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("requires attribute browser");
    }
}
