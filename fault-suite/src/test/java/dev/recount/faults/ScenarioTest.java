package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScenarioTest {
    @TempDir
    Path dir;

    /** What `produce` sends of a file: each line without its end ("\r\n" too), blank lines skipped, any bytes. */
    @Test
    void theValuesAreTheLinesProduceSendsThenTheDirectRecords() throws Exception {
        Path file = dir.resolve("traffic.jsonl");
        Files.write(file, new byte[] {'a', '\n', '\n', ' ', '\t', '\n', 'b', '\r', '\n', (byte) 0xff, '\n', 'c'});
        PoisonCorpus.Direct direct = new PoisonCorpus.Direct(new byte[] {'k'}, "d".getBytes(StandardCharsets.UTF_8), 7);
        Instant t = Instant.parse("2026-12-01T10:00:00Z");

        List<byte[]> values = new Scenario(file, t, t.plusSeconds(60), List.of(direct)).values();

        assertThat(values)
                .containsExactly(
                        new byte[] {'a'}, new byte[] {'b'}, new byte[] {(byte) 0xff}, new byte[] {'c'}, new byte[] {'d'
                        });
    }
}
