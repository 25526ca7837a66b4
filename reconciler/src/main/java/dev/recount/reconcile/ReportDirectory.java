package dev.recount.reconcile;

import dev.recount.db.tables.ReconciliationRunsTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a run's report goes: {@code run-<id>-<from>} under the report root, written under a {@code .partial} name
 * until the run commits and moved into place after, so that the index never lists the report of a run that did not
 * commit.
 */
final class ReportDirectory {
    private static final Logger LOG = LoggerFactory.getLogger(ReportDirectory.class);

    /** The suffix of a report directory while its run has not committed; the index skips such directories. */
    static final String IN_PROGRESS = ".partial";

    private static final DateTimeFormatter DIR_TIME =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    private final Path root;

    ReportDirectory(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    /**
     * run-&lt;id&gt;-&lt;from&gt;, made unique: run ids start again at 1 in a new database (a fresh local stack,
     * another schema) while the report directory may be kept, and an old report must never be overwritten.
     */
    Path forRun(long runId, Scope scope) {
        String base = "run-" + runId + "-" + DIR_TIME.format(scope.from());
        Path dir = root.resolve(base);
        for (int n = 2; Files.exists(dir) || Files.exists(inProgress(dir)); n++) {
            dir = root.resolve(base + "-" + n);
        }
        return dir;
    }

    /** Where the report of {@code finalDir} is written until its run commits. */
    static Path inProgress(Path finalDir) {
        return finalDir.resolveSibling(finalDir.getFileName() + IN_PROGRESS);
    }

    /**
     * Moves into place the report of a run killed after its commit but before its report directory was moved: the run
     * is recorded succeeded with that directory, so its report belongs there, not under the ".partial" name the index
     * skips. Any other ".partial" directory is left alone: a run of another schema that shares the report root may be
     * writing it.
     */
    void finishInterrupted(Connection conn) throws SQLException {
        if (!Files.isDirectory(root)) return;
        List<Path> partials;
        try (java.util.stream.Stream<Path> entries = Files.list(root)) {
            partials = entries.filter(p -> p.getFileName().toString().startsWith("run-")
                            && p.getFileName().toString().endsWith(IN_PROGRESS)
                            && Files.isDirectory(p))
                    .toList();
        } catch (IOException e) {
            LOG.warn("cannot list {} for reports left unmoved: {}", root, e.toString());
            return;
        }
        for (Path partial : partials) {
            String name = partial.getFileName().toString();
            Path finalDir = partial.resolveSibling(name.substring(0, name.length() - IN_PROGRESS.length()));
            if (Files.exists(finalDir)) continue;
            Optional<Long> run = ReconciliationRunsTable.succeededWithReport(conn, finalDir.toString());
            if (run.isEmpty()) continue;
            try {
                Files.move(partial, finalDir, StandardCopyOption.ATOMIC_MOVE);
                LOG.warn(
                        "run {} succeeded but its report was never moved into place (killed?); moved it to {}",
                        run.get(),
                        finalDir);
            } catch (IOException e) {
                LOG.warn(
                        "cannot move the report of run {} from {} to {}: {}",
                        run.get(),
                        partial,
                        finalDir,
                        e.toString());
            }
        }
    }

    static void deleteQuietly(Path dir) {
        if (!Files.exists(dir)) return;
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.warn("could not delete {}: {}", dir, e.getMessage());
        }
    }
}
