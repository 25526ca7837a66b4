package dev.recount.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The suite's figures as Markdown: one row per fault over all its rounds, then every round. Written into the
 * generated section (between the markers) of a file of the run's own under fault-suite/results/, or of the file
 * {@code --report} names, so any text around it stays hand-written. docs/reliability.md is never written by a run.
 */
final class ReliabilityReport {
    static final String BEGIN = "<!-- BEGIN fault-suite results -->";
    static final String END = "<!-- END fault-suite results -->";

    private static final DateTimeFormatter RUN_NAME =
            DateTimeFormatter.ofPattern("'run-'yyyyMMdd'T'HHmmss'.md'").withZone(ZoneOffset.UTC);

    private ReliabilityReport() {}

    /** The file name of a run started at {@code startedAt}: run-20261204T144300.md, in UTC, so runs sort by time. */
    static String runFileName(Instant startedAt) {
        return RUN_NAME.format(startedAt);
    }

    static String render(List<RoundResult> rounds, String command, String machine, Instant finishedAt) {
        StringBuilder md = new StringBuilder();
        md.append("Run finished ")
                .append(finishedAt)
                .append(" on ")
                .append(machine)
                .append(".\n")
                .append("Reproduce: `")
                .append(command)
                .append("`\n\n");
        md.append("| fault | rounds | injections | events lost | events double-counted | dead letters lost / extra "
                + "| lake missing / duplicated | window_metrics keys wrong after reconcile | time to recover (median / max) "
                + "| all exact |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|\n");
        Map<Fault, List<RoundResult>> byFault = new EnumMap<>(Fault.class);
        for (RoundResult r : rounds)
            byFault.computeIfAbsent(r.fault(), f -> new ArrayList<>()).add(r);
        byFault.forEach((fault, rs) -> {
            List<Duration> recoveries = new ArrayList<>();
            rs.forEach(r -> recoveries.addAll(r.recoveries()));
            recoveries.sort(null);
            md.append("| ")
                    .append(fault.description)
                    .append(" | ")
                    .append(rs.size())
                    .append(" | ")
                    .append(rs.stream().mapToInt(RoundResult::injections).sum())
                    .append(" | ")
                    .append(sum(rs, a -> a.eventsLost()))
                    .append(" | ")
                    .append(sum(rs, a -> a.eventsDoubled() + a.backfillDuplicates() + a.backfillUnknown()))
                    .append(" | ")
                    .append(sum(rs, Accounting.Result::deadLettersLost))
                    .append(" / ")
                    .append(sum(rs, Accounting.Result::deadLettersExtra))
                    .append(" | ")
                    .append(sum(rs, Accounting.Result::lakeMissing))
                    .append(" / ")
                    .append(sum(rs, Accounting.Result::lakeDuplicates))
                    .append(" | ")
                    .append(sum(rs, Accounting.Result::finalKeysWrong))
                    .append(" | ")
                    .append(
                            recoveries.isEmpty()
                                    ? "-"
                                    : seconds(recoveries.get(recoveries.size() / 2)) + " / "
                                            + seconds(recoveries.get(recoveries.size() - 1)))
                    .append(" | ")
                    .append(rs.stream().allMatch(RoundResult::passed) ? "yes" : "**no**")
                    .append(" |\n");
        });
        md.append("\nEvery round:\n\n");
        for (RoundResult r : rounds) {
            md.append("- ")
                    .append(r.fault())
                    .append(" (")
                    .append(seconds(r.elapsed()))
                    .append("): ")
                    .append(r.passed() ? "exact" : "**not exact**")
                    .append(" — ")
                    .append(r.accounting())
                    .append("; recoveries ")
                    .append(r.recoveries().stream()
                            .map(ReliabilityReport::seconds)
                            .toList());
            if (!r.notes().isEmpty()) md.append("; ").append(String.join("; ", r.notes()));
            md.append('\n');
        }
        return md.toString();
    }

    /** Replaces the generated section of {@code doc} (creating the file, or the markers at its end, if missing). */
    static void writeInto(Path doc, String section) throws IOException {
        String text = Files.exists(doc)
                ? Files.readString(doc, StandardCharsets.UTF_8)
                : "# Fault suite run " + doc.getFileName().toString().replaceFirst("\\.md$", "") + "\n\n";
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        String generated = BEGIN + "\n" + section + END;
        String updated = begin >= 0 && end > begin
                ? text.substring(0, begin) + generated + text.substring(end + END.length())
                : text + (text.endsWith("\n") || text.isEmpty() ? "" : "\n") + generated + "\n";
        Files.createDirectories(doc.toAbsolutePath().getParent());
        Files.writeString(doc, updated, StandardCharsets.UTF_8);
    }

    private static long sum(List<RoundResult> rs, java.util.function.ToLongFunction<Accounting.Result> f) {
        return rs.stream().mapToLong(r -> f.applyAsLong(r.accounting())).sum();
    }

    private static String seconds(Duration d) {
        return String.format("%.1f s", d.toMillis() / 1000.0);
    }
}
