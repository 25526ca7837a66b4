package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TrafficTest {
    @TempDir
    Path dir;

    /** Seven lines, one of them not UTF-8, the last without a line end. */
    private static final byte[] TRAFFIC = concat(
            "{\"a\":1}\n",
            "{\"a\":2}\n",
            "{\"a\":3}\n",
            new byte[] {'{', (byte) 0xff, '}', '\n'},
            "{\"a\":5}\n",
            "{\"a\":6}\n",
            "{\"a\":7}");

    @Test
    void partsCutBetweenLinesHoldEveryByteOnceInOrder() throws Exception {
        Path file = dir.resolve("traffic.jsonl");
        Files.write(file, TRAFFIC);
        for (int count = 2; count <= 4; count++) {
            List<Path> parts = Traffic.split(file, count);
            assertThat(parts).hasSize(count).doesNotContain(file);
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            for (int i = 0; i < count; i++) {
                byte[] part = Files.readAllBytes(parts.get(i));
                assertThat(part).isNotEmpty();
                if (i < count - 1)
                    assertThat(part[part.length - 1])
                            .as("part %d ends a line", i)
                            .isEqualTo((byte) '\n');
                joined.writeBytes(part);
            }
            assertThat(joined.toByteArray()).isEqualTo(TRAFFIC);
        }
    }

    @Test
    void partsHoldAboutEqualLineCounts() throws Exception {
        Path file = dir.resolve("traffic.jsonl");
        Files.write(file, TRAFFIC);
        List<Path> halves = Traffic.split(file, 2);
        // 6 line ends: 3 complete lines in the first half, the rest (3 and the unterminated one) in the second
        assertThat(lineEnds(Files.readAllBytes(halves.get(0)))).isEqualTo(3);
        assertThat(lineEnds(Files.readAllBytes(halves.get(1)))).isEqualTo(3);
    }

    @Test
    void onePartIsTheFileItselfAndNoPartsIsRefused() throws Exception {
        Path file = dir.resolve("traffic.jsonl");
        Files.write(file, TRAFFIC);
        assertThat(Traffic.split(file, 1)).containsExactly(file);
        assertThatThrownBy(() -> Traffic.split(file, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    private static int lineEnds(byte[] bytes) {
        int n = 0;
        for (byte b : bytes) if (b == '\n') n++;
        return n;
    }

    private static byte[] concat(Object... pieces) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object p : pieces) {
            out.writeBytes(p instanceof byte[] b ? b : ((String) p).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }
}
