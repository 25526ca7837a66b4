package dev.recount.core.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFileTest {
    @TempDir
    Path dir;

    /**
     * Two writers of one file, as `recount up` and the Kafka broker it starts both record the broker's pid: every write
     * succeeds, the file holds one writer's whole text, and no temporary file is left. With one temporary name shared
     * by both, a writer's rename found its file already renamed by the other (`recount up` failed in a build).
     */
    @Test
    void twoWritersOfOneFileBothSucceedAndLeaveOneWholeText() throws Exception {
        Path file = dir.resolve("broker.pid");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> writers = new ArrayList<>();
            for (String text : List.of("111\n", "222222\n")) {
                writers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 500; i++) AtomicFile.write(file, text, false);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> w : writers) w.get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(Files.readString(file)).isIn("111\n", "222222\n");
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString())).containsExactly("broker.pid");
        }
    }

    @Test
    void anOwnerOnlyFileIsOwnerOnlyFromItsCreation() throws Exception {
        Path file = dir.resolve("secret");
        AtomicFile.write(file, "pw\n", true);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
        assertThat(Files.readString(file)).isEqualTo("pw\n");
    }
}
