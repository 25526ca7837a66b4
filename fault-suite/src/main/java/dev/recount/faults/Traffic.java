package dev.recount.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A round's traffic file, sent by `produce` in parts, each started when the round says. A fault that stops or kills the job must
 * have traffic after it: a job that resumes with no new events has no watermark, so it commits nothing until the
 * drain, and the round would wait for a commit that cannot come. However slow the machine, the next part is only
 * started after the fault ({@link #sendNextPart}), so there always is some.
 *
 * <p>Parts never overlap: a part asked for while the one before is still being sent starts when that one has been
 * sent, that is when its `produce` exits 0 (a failed one is rerun by {@link #awaitSent} first). Sent side by side,
 * the start of a part (later event times) would move the watermark past the end of the one before, and its last
 * events would be too late by the traffic's making rather than the generator's (one kill round had 3,529 of 20,694
 * events on the backfill topic instead of the usual ~400).
 *
 * <p>Each part is a file of its own; `produce` keeps a resume marker per file, so a rerun of a part continues after
 * its last committed line.
 */
final class Traffic {
    private static final int PRODUCE_ATTEMPTS = 5;

    /** Starts `produce` for one part; where its output goes. */
    interface Producer {
        Process start(Path part);

        Path log();
    }

    private final Producer producer;
    private final List<Path> parts;
    /**
     * The latest `produce` of every part asked for (index: the part), started or waiting for the part before to be
     * sent.
     */
    private final List<CompletableFuture<Process>> produces = new ArrayList<>();
    /** Per part asked for: done once one of its `produce` runs has exited 0. */
    private final List<CompletableFuture<Void>> sent = new ArrayList<>();

    Traffic(Producer producer, List<Path> parts) {
        this.producer = producer;
        this.parts = parts;
        sent.add(new CompletableFuture<>());
        produces.add(CompletableFuture.completedFuture(started(0, producer.start(parts.get(0)))));
    }

    /** {@code produce}, the latest run for part {@code part}: the part is sent when it exits 0. */
    private Process started(int part, Process produce) {
        CompletableFuture<Void> done = sent.get(part);
        produce.onExit().thenAccept(p -> {
            if (p.exitValue() == 0) done.complete(null);
        });
        return produce;
    }

    /** Starts sending the first of {@code partCount} parts of {@code file} (cut between lines, a part each). */
    static Traffic start(Pipeline pipeline, Path file, int partCount, double rate) throws IOException {
        return new Traffic(
                new Producer() {
                    @Override
                    public Process start(Path part) {
                        return pipeline.startProduce(part, rate);
                    }

                    @Override
                    public Path log() {
                        return pipeline.log("produce");
                    }
                },
                split(file, partCount));
    }

    /** Whether a part is still being sent or waiting to be. */
    boolean sending() {
        return produces.stream().anyMatch(p -> !p.isDone() || p.join().isAlive());
    }

    /**
     * The `produce` of the part asked for last, once started (it may have ended; a failed one is rerun by {@link
     * #awaitSent}).
     */
    Process produce() {
        return produces.get(produces.size() - 1).join();
    }

    /**
     * Asks for the next part: it starts now, or once the part before has been sent (nothing here waits, so a recovery
     * measured right after this call is not delayed by it); does nothing when every part has been asked for (a fault
     * of a round sent in one part happens during that part). After a failed `produce` of the part before, that is
     * once {@link #awaitSent} has rerun it.
     */
    void sendNextPart() {
        if (produces.size() == parts.size()) return;
        int part = produces.size();
        CompletableFuture<Void> before = sent.get(part - 1);
        sent.add(new CompletableFuture<>());
        produces.add(before.thenApplyAsync(v -> started(part, producer.start(parts.get(part)))));
    }

    /**
     * Waits until every part asked for so far is sent, rerunning `produce` (it resumes after its last line) as needed.
     */
    void awaitSent() throws Exception {
        for (int part = 0; part < produces.size(); part++) {
            for (int attempt = 1; ; attempt++) {
                Process produce = produces.get(part).get(10, TimeUnit.MINUTES);
                if (!produce.waitFor(10, TimeUnit.MINUTES)) throw new IllegalStateException("produce did not finish");
                if (produce.exitValue() == 0) break;
                if (attempt == PRODUCE_ATTEMPTS) {
                    throw new IllegalStateException(
                            "produce failed " + PRODUCE_ATTEMPTS + " times; see " + producer.log());
                }
                produces.set(part, CompletableFuture.completedFuture(started(part, producer.start(parts.get(part)))));
            }
        }
    }

    /** Sends whatever is left, waiting until every part is sent. */
    void finish() throws Exception {
        while (produces.size() < parts.size()) sendNextPart();
        awaitSent();
    }

    /**
     * The file's lines in {@code count} files of about equal line counts, cut between bytes (a line need not be
     * UTF-8); the file itself when {@code count} is 1.
     */
    static List<Path> split(Path file, int count) throws IOException {
        if (count < 1) throw new IllegalArgumentException("parts: " + count);
        if (count == 1) return List.of(file);
        byte[] bytes = Files.readAllBytes(file);
        int lines = 0;
        for (byte b : bytes) if (b == '\n') lines++;
        List<Path> parts = new ArrayList<>(count);
        int from = 0;
        int cut = 0;
        int seen = 0;
        for (int part = 1; part <= count; part++) {
            if (part == count) {
                cut = bytes.length; // the rest, with a last line that may have no line end
            } else {
                int until = (int) ((long) lines * part / count);
                while (seen < until) if (bytes[cut++] == '\n') seen++;
            }
            Path p = file.resolveSibling(stem(file) + "-part-" + part + "-of-" + count + ".jsonl");
            Files.write(p, Arrays.copyOfRange(bytes, from, cut));
            parts.add(p);
            from = cut;
        }
        return parts;
    }

    private static String stem(Path file) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }
}
