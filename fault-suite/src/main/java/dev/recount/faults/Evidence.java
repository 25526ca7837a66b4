package dev.recount.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * What a failed round (a timeout, an exception) keeps before the clusters go down and the stack's temporary home is
 * deleted: the stack's Flink and Spark logs copied into the round's directory, and the end of the newest stream log
 * and of the JobManager's and TaskManagers' logs (a round on the clusters) printed, so that a failure in CI, whose
 * directories are gone afterwards, can be read from its output.
 */
final class Evidence {
    /** Lines of each log a failed round prints: enough for the failure's last steps, not a whole run. */
    private static final int TAIL_LINES = 60;

    private Evidence() {}

    static void keep(Fault fault, Stack stack, Path dir, Pipeline pipeline, Throwable failure, Consumer<String> log) {
        Path kept = dir.resolve("stack-logs");
        List<Path> tails = new ArrayList<>();
        if (pipeline.streamStarts() > 0) tails.add(pipeline.streamLog());
        try (var files = Files.list(stack.home().resolve("logs"))) {
            Files.createDirectories(kept);
            for (Path f : files.filter(f -> f.getFileName().toString().matches("(flink|spark)-.*"))
                    .sorted()
                    .toList()) {
                Path copy = kept.resolve(f.getFileName());
                Files.copy(f, copy, StandardCopyOption.REPLACE_EXISTING);
                if (copy.getFileName().toString().matches("flink-(jobmanager|taskmanager-\\d+)\\.log")) tails.add(copy);
            }
        } catch (IOException e) {
            log.accept(fault + ": could not keep the stack's logs: " + e.getMessage());
        }
        log.accept(fault + " failed (" + failure + "); the stack's Flink and Spark logs are kept in " + kept);
        for (Path f : tails) {
            log.accept("---- the end of " + f);
            log.accept(Logs.lastLines(f, TAIL_LINES));
        }
    }
}
