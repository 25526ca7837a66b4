package dev.recount.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The oracle against the golden file (src/test/resources/golden): records with duplicates, one invalid record of every
 * kind, attributes absent, defaulted and filtered, two window sizes, attributed and unattributed clicks; their verdicts
 * and every set's rows written by hand. The oracle must reproduce them exactly.
 */
class GoldenFileTest {
    /** One line of records.txt: what the record must become, and the record. */
    record Sent(Oracle.Verdict expected, long recordTs, byte[] value, String line) {}

    @Test
    void judgesEveryRecordAsWrittenByHand() throws Exception {
        Oracle oracle = oracle();
        List<String> wrong = new ArrayList<>();
        for (Sent s : records()) {
            Oracle.Verdict got = oracle.accept(s.value(), s.recordTs());
            if (got != s.expected()) wrong.add(got + " instead of " + s.expected() + ": " + s.line());
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void reproducesEverySetsRowsAndAttributionExactly(@TempDir Path out) throws Exception {
        Oracle oracle = oracle();
        for (Sent s : records()) oracle.accept(s.value(), s.recordTs());
        oracle.truth().write(out);

        Path expected = golden("expected");
        Map<String, String> want = csvFiles(expected);
        Map<String, String> got = csvFiles(out);
        // Also no file too many: campaign_slot has attribution off, so no campaign_slot.attribution.csv.
        assertThat(got.keySet()).containsExactlyElementsOf(want.keySet());
        want.forEach((file, text) -> assertThat(got.get(file)).as(file).isEqualTo(text));
    }

    @Test
    void countsTheRecordsTheirCopiesAndTheDeadLettersAsWrittenByHand() throws Exception {
        Oracle oracle = oracle();
        for (Sent s : records()) oracle.accept(s.value(), s.recordTs());
        Truth truth = oracle.truth();
        Properties want = properties(golden("expected/summary.properties"));

        assertThat(truth.records()).isEqualTo(Long.parseLong(want.getProperty("records")));
        assertThat(truth.uniqueEvents()).isEqualTo(Long.parseLong(want.getProperty("unique_events")));
        assertThat(truth.duplicates()).isEqualTo(Long.parseLong(want.getProperty("duplicates")));
        assertThat(truth.invalidByReason())
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        "malformed", Long.parseLong(want.getProperty("malformed")),
                        "schema", Long.parseLong(want.getProperty("schema")),
                        "timestamp", Long.parseLong(want.getProperty("timestamp"))));
    }

    static Oracle oracle() throws Exception {
        OracleSettings settings = OracleSettings.fromProperties(properties(golden("settings.properties")));
        Definitions definitions = Definitions.parse(Files.readString(golden("metric-sets.yaml")), settings);
        return new Oracle(definitions, settings);
    }

    static List<Sent> records() throws Exception {
        List<Sent> out = new ArrayList<>();
        for (String line : Files.readAllLines(golden("records.txt"), StandardCharsets.UTF_8)) {
            if (line.isBlank() || line.startsWith("#")) continue;
            String[] parts = line.split(" ", 3);
            String value = parts[2];
            byte[] bytes = value.equals("-")
                    ? null
                    : value.startsWith("hex:")
                            ? HexFormat.of().parseHex(value.substring(4))
                            : value.getBytes(StandardCharsets.UTF_8);
            out.add(new Sent(
                    Oracle.Verdict.valueOf(parts[0]), Instant.parse(parts[1]).toEpochMilli(), bytes, line));
        }
        return out;
    }

    static Map<String, String> csvFiles(Path dir) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".csv")).toList()) {
                out.put(f.getFileName().toString(), Files.readString(f, StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    static Path golden(String name) throws URISyntaxException {
        return Path.of(GoldenFileTest.class.getResource("/golden/" + name).toURI());
    }

    static Properties properties(Path file) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file);
                Reader r = new java.io.InputStreamReader(in, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }
}
