package dev.recount.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A round's traffic file, sent by `produce` in parts, each started when the round says. A fault that stops or kills the job must
 * have traffic after it: a job that resumes with no new events has no watermark, so it commits nothing until the
 * drain, and the round would wait for a commit that cannot come. However slow the machine, the next part is only
 * started after the fault ({@link #sendNextPart}), so there always is some.
 *
 * <p>Each part is a file of its own; `produce` keeps a resume marker per file, so a rerun of a part continues after
 * its last committed line.
 */
final class Traffic {
    private static final int PRODUCE_ATTEMPTS = 5;

    private final Pipeline pipeline;
    private final List<Path> parts;
    private final double rate;
    /** The `produce` of every part started (index: the part), finished or not. */
    private final List<Process> produces = new ArrayList<>();

    private Traffic(Pipeline pipeline, List<Path> parts, double rate) {
        this.pipeline = pipeline;
        this.parts = parts;
        this.rate = rate;
        produces.add(pipeline.startProduce(parts.get(0), rate));
    }

    /** Starts sending the first of {@code partCount} parts of {@code file} (cut between lines, a part each). */
    static Traffic start(Pipeline pipeline, Path file, int partCount, double rate) throws IOException {
        return new Traffic(pipeline, split(file, partCount), rate);
    }

    /** Whether `produce` is still sending a part. */
    boolean sending() {
        return produces.stream().anyMatch(Process::isAlive);
    }

    /** The `produce` of the part started last (it may have ended; a failed one is rerun by {@link #awaitSent}). */
    Process produce() {
        return produces.get(produces.size() - 1);
    }

    /**
     * Starts sending the next part now (beside what is still being sent: nothing waits, so a recovery measured
     * right after this call is not delayed by it); does nothing when every part has been started (a fault of a
     * round sent in one part happens during that part).
     */
    void sendNextPart() {
        if (produces.size() == parts.size()) return;
        produces.add(pipeline.startProduce(parts.get(produces.size()), rate));
    }

    /** Waits until every part started so far is sent, rerunning `produce` (it resumes after its last line) as needed. */
    void awaitSent() throws Exception {
        for (int part = 0; part < produces.size(); part++) {
            for (int attempt = 1; ; attempt++) {
                Process produce = produces.get(part);
                if (!produce.waitFor(10, TimeUnit.MINUTES)) throw new IllegalStateException("produce did not finish");
                if (produce.exitValue() == 0) break;
                if (attempt == PRODUCE_ATTEMPTS) {
                    throw new IllegalStateException(
                            "produce failed " + PRODUCE_ATTEMPTS + " times; see " + pipeline.log("produce"));
                }
                produces.set(part, pipeline.startProduce(parts.get(part), rate));
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
