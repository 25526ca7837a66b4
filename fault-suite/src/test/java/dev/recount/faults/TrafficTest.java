package dev.recount.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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

    @Test
    void aPartAskedForWhileTheOneBeforeIsSentStartsOnlyWhenThatOneEnds() throws Exception {
        Path first = dir.resolve("first.jsonl");
        Path second = dir.resolve("second.jsonl");
        RecordingProducer producer = new RecordingProducer();
        Traffic traffic = new Traffic(producer, List.of(first, second));
        Process sendingFirst = producer.started.get(0).process();

        traffic.sendNextPart();
        assertThat(traffic.sending()).isTrue();
        assertThat(producer.started).as("the first part is still being sent").hasSize(1);

        sendingFirst.getOutputStream().close(); // `cat` ends with its input
        traffic.awaitSent();
        assertThat(producer.started).extracting(Started::part).containsExactly(first, second);
        assertThat(producer.started.get(1).anotherStillRunning())
                .as("the second part started while the first was still sent")
                .isFalse();
        assertThat(traffic.sending()).isFalse();
    }

    @Test
    void aPartWhoseProduceFailedIsSentAgain() throws Exception {
        Path only = dir.resolve("only.jsonl");
        RecordingProducer producer = new RecordingProducer();
        producer.failFirst = true;
        Traffic traffic = new Traffic(producer, List.of(only));
        traffic.finish();
        assertThat(producer.started).extracting(Started::part).containsExactly(only, only);
        assertThat(traffic.produce().exitValue()).isZero();
    }

    /**
     * A part asked for after the `produce` of the part before failed waits until that part is sent again: started
     * when the failed one exited, it would run beside the rerun of the part before, whose events would then come
     * after some of its own.
     */
    @Test
    void aPartAfterAFailedOneStartsOnlyOnceThatOneIsSent() throws Exception {
        Path first = dir.resolve("first.jsonl");
        Path second = dir.resolve("second.jsonl");
        RecordingProducer producer = new RecordingProducer();
        producer.failFirst = true;
        Traffic traffic = new Traffic(producer, List.of(first, second));
        assertThat(producer.started.get(0).process().onExit().get().exitValue()).isNotZero();

        traffic.sendNextPart();
        assertThat(traffic.sending()).as("the second part waits for the first").isTrue();
        // What must not happen: the second part started by itself (it did within milliseconds, before).
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> producer.started.size() == 1);
        traffic.awaitSent();
        assertThat(producer.started).extracting(Started::part).containsExactly(first, first, second);
        assertThat(producer.started).extracting(Started::anotherStillRunning).containsOnly(false);
        assertThat(traffic.produce().exitValue()).isZero();
        assertThat(traffic.sending()).isFalse();
    }

    /** A `produce` started for a part; whether another was still running at that moment. */
    private record Started(Path part, Process process, boolean anotherStillRunning) {}

    /**
     * Starts real processes in place of `produce`: the first part's is `cat`, which runs until its input is closed
     * (the test decides when it ends); any other is `true`, or, once if {@code failFirst}, `false`.
     */
    private static final class RecordingProducer implements Traffic.Producer {
        final List<Started> started = new java.util.concurrent.CopyOnWriteArrayList<>();
        boolean failFirst;

        @Override
        public Process start(Path part) {
            boolean running = started.stream().anyMatch(s -> s.process().isAlive());
            String command = started.isEmpty() ? (failFirst ? "false" : "cat") : "true";
            try {
                Process p = new ProcessBuilder(command).start();
                started.add(new Started(part, p, running));
                return p;
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public Path log() {
            return Path.of("produce.log");
        }
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
