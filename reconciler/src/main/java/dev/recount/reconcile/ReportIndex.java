package dev.recount.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.reconcile.report.ReportWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The reports under a report directory, read from each run's summary.json. Run ids start again in a new database
 * while the directory may be kept, so "latest" means latest generated, not highest run id.
 */
final class ReportIndex {
    /**
     * One report: what its summary.json says, and where it is. {@code sets}: per metric set of the run, its verdict,
     * or "not reconciled" for a set no batch run covered (empty for a report from before metric sets).
     */
    record Report(
            long runId,
            boolean dryRun,
            Instant from,
            Instant to,
            String verdict,
            Instant generatedAt,
            Path dir,
            Map<String, String> sets) {
        /** The verdict written where a set was not reconciled. */
        static final String NOT_RECONCILED = "not reconciled";

        String range() {
            return "[" + from + ", " + to + ")";
        }

        /** Whether the run was of the default set alone (or from before metric sets): one verdict says it all. */
        boolean defaultSetOnly() {
            return sets.isEmpty() || sets.keySet().equals(java.util.Set.of(dev.recount.core.sets.MetricSet.DEFAULT));
        }
    }

    /** A directory that looks like a report but whose summary.json cannot be read. */
    record Unreadable(Path dir, String reason) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    final List<Report> reports = new ArrayList<>();
    final List<Unreadable> unreadable = new ArrayList<>();

    /** Reads every {@code run-*} directory of {@code root}; an absent root has no reports. In-progress ones are skipped. */
    static ReportIndex read(Path root) throws IOException {
        ReportIndex index = new ReportIndex();
        if (!Files.isDirectory(root)) return index;
        try (Stream<Path> dirs = Files.list(root)) {
            for (Path dir : dirs.filter(Files::isDirectory).sorted().toList()) {
                String name = dir.getFileName().toString();
                if (!name.startsWith("run-") || name.endsWith(ReportDirectory.IN_PROGRESS)) continue;
                try {
                    index.reports.add(parse(dir));
                } catch (IOException | RuntimeException e) {
                    index.unreadable.add(new Unreadable(
                            dir,
                            e.getMessage() == null
                                    ? e.getClass().getSimpleName()
                                    : e.getMessage().replaceAll("\\s*\\R\\s*", " ")));
                }
            }
        }
        index.reports.sort(Comparator.comparing(Report::generatedAt).thenComparingLong(Report::runId));
        return index;
    }

    /**
     * Per range, oldest range first, its latest report that applied its corrections; a range only dry runs covered
     * has its latest dry run.
     */
    List<Report> latestPerRange() {
        Map<String, Report> latest = new LinkedHashMap<>();
        for (Report r : reports) { // oldest generated first: a later one replaces an earlier one
            Report kept = latest.get(r.range());
            if (kept == null || !r.dryRun() || kept.dryRun()) latest.put(r.range(), r);
        }
        return latest.values().stream()
                .sorted(Comparator.comparing(Report::from).thenComparing(Report::to))
                .toList();
    }

    private static Report parse(Path dir) throws IOException {
        Path summary = dir.resolve(ReportWriter.JSON);
        if (!Files.isRegularFile(summary)) throw new IOException("no " + ReportWriter.JSON);
        JsonNode root = JSON.readTree(summary.toFile());
        JsonNode scope = required(root, "scope");
        Map<String, String> sets = new LinkedHashMap<>();
        JsonNode reconciled = root.get("sets");
        if (reconciled != null && reconciled.isObject()) {
            reconciled.fields().forEachRemaining(e -> {
                JsonNode verdict = e.getValue().get("verdict");
                sets.put(e.getKey(), verdict == null ? "?" : verdict.asText());
            });
        }
        JsonNode notCovered = root.get("not_covered");
        if (notCovered != null && notCovered.isObject()) {
            notCovered.fieldNames().forEachRemaining(set -> sets.put(set, Report.NOT_RECONCILED));
        }
        return new Report(
                required(root, "run_id").asLong(),
                required(root, "dry_run").asBoolean(),
                Instant.parse(required(scope, "from").asText()),
                Instant.parse(required(scope, "to").asText()),
                required(root, "verdict").asText(),
                Instant.parse(required(root, "generated_at").asText()),
                dir,
                sets);
    }

    private static JsonNode required(JsonNode node, String field) throws IOException {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) throw new IOException(ReportWriter.JSON + " has no " + field);
        return v;
    }
}
