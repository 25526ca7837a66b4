package dev.recount.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * The stream job's checkpoints on disk: watched, so that a fault can hit a given moment (during a checkpoint, right
 * after one), and damaged (the newest deleted or its metadata truncated) before a restart.
 */
final class Checkpoints {
    private Checkpoints() {}

    /** Whether a checkpoint was caught in progress (a chk-N without _metadata) within 20 s. */
    static boolean awaitInProgress(Pipeline pipeline) throws IOException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            for (Path chk : pipeline.checkpointDirs()) {
                if (!Files.exists(chk.resolve("_metadata"))) return true;
            }
            LockSupport.parkNanos(Duration.ofMillis(2).toNanos()); // watching for a short-lived state, not waiting
        }
        return false;
    }

    /** Waits until a complete checkpoint newer than the newest one now exists. */
    static void awaitNewComplete(Pipeline pipeline) throws IOException {
        Optional<Path> before = newestComplete(pipeline);
        Poll.until(Duration.ofMinutes(2), "a new complete checkpoint", () -> {
            Optional<Path> now = newestComplete(pipeline);
            return now.isPresent() && !now.equals(before);
        });
    }

    static Optional<Path> newestComplete(Pipeline pipeline) throws IOException {
        return pipeline.checkpointDirs().stream()
                .filter(p -> Files.exists(p.resolve("_metadata")))
                .max(Comparator.comparingLong(Checkpoints::modified));
    }

    private static long modified(Path chk) {
        try {
            return Files.getLastModifiedTime(chk.resolve("_metadata")).toMillis();
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * kill -9 of the stream job, then its newest complete checkpoint deleted ({@code delete}) or its _metadata cut in
     * half, and the job started again: it must refuse (then the checkpoint is restored and the job started again) or
     * resume from an older checkpoint, and either way count everything once.
     */
    static int damageNewest(Pipeline pipeline, boolean delete, Observations seen) throws Exception {
        awaitNewComplete(pipeline);
        if (delete) {
            // Deleted after its results were committed: resuming from the older one would count twice (refused).
            Instant completed =
                    Instant.ofEpochMilli(modified(newestComplete(pipeline).orElseThrow()));
            pipeline.awaitCommitAfter(completed, completed, Duration.ofMinutes(2));
        } else {
            // Corrupted right after it completed, most likely before its results were committed (older one safe).
            Poll.pause(Duration.ofMillis(200));
        }
        Instant killed = Instant.now();
        pipeline.killStream();
        Path newest = newestComplete(pipeline).orElseThrow();
        Path backup = pipeline.dir.resolve("backup-" + newest.getFileName());
        copyTree(newest, backup);
        if (delete) {
            deleteTree(newest);
        } else {
            Path metadata = newest.resolve("_metadata");
            byte[] bytes = Files.readAllBytes(metadata);
            Files.write(metadata, java.util.Arrays.copyOf(bytes, bytes.length / 2));
        }
        Instant restartedAt = Instant.now();
        Process restarted = pipeline.startStream();
        Path logFile = pipeline.streamLog();
        // Refused (the process exits non-zero with one line) or resumed (it prints that its job runs).
        Poll.until(
                Duration.ofMinutes(3),
                "the damaged restart to be refused or to run",
                () -> !restarted.isAlive()
                        || Files.exists(logFile) && Files.readString(logFile).contains(" running"));
        boolean refused = !restarted.isAlive() && restarted.exitValue() != 0;
        String what = (delete ? "deleted " : "corrupted ") + newest.getFileName();
        if (refused) {
            seen.notes.add(what + ": refused (exit " + restarted.exitValue() + "): " + Logs.lastLine(logFile));
            deleteTree(newest);
            copyTree(backup, newest);
            restartedAt = Instant.now();
            pipeline.startStream();
        } else if (!restarted.isAlive()) {
            throw new IllegalStateException("the stream job exited 0 right after the damaged restart; see " + logFile);
        } else {
            seen.notes.add(
                    what + ": resumed from an older checkpoint: " + Logs.lastMatching(logFile, "resuming|skipping"));
        }
        pipeline.awaitRunning();
        seen.recoveries.add(pipeline.awaitCommitAfter(restartedAt, killed, Duration.ofMinutes(3)));
        return 1;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(target);
                else Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }
}
