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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * The suite's figures as Markdown: one row per fault over all its rounds, one per fault and metric set, then every
 * round. Written into the
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
        Map<Fault, List<RoundResult>> byFault = new EnumMap<>(Fault.class);
        for (RoundResult r : rounds)
            byFault.computeIfAbsent(r.fault(), f -> new ArrayList<>()).add(r);

        md.append("| fault | rounds | injections | backfill records twice / unknown / wrong payload / wrong window "
                + "| dead letters lost / extra / wrong reason | lake rows missing / twice / extra / wrong | other problems "
                + "| time to recover (median / max) | all exact |\n");
        md.append("|---|---|---|---|---|---|---|---|---|\n");
        byFault.forEach((fault, rs) -> {
            List<Duration> recoveries = new ArrayList<>();
            rs.forEach(r -> recoveries.addAll(r.recoveries()));
            recoveries.sort(null);
            md.append("| `")
                    .append(fault.name())
                    .append("`: ")
                    .append(fault.description)
                    .append(" | ")
                    .append(rs.size())
                    .append(" | ")
                    .append(rs.stream().mapToInt(RoundResult::injections).sum())
                    .append(" | ")
                    .append(sums(
                            rs,
                            a -> a.backfill().duplicates(),
                            a -> a.backfill().unknown(),
                            a -> a.backfill().wrongPayload(),
                            a -> a.backfill().wrongWindow()))
                    .append(" | ")
                    .append(sums(
                            rs,
                            a -> a.deadLetters().lost(),
                            a -> a.deadLetters().extra(),
                            a -> a.deadLetters().wrongReason()))
                    .append(" | ")
                    .append(sums(
                            rs,
                            a -> a.lake().missing(),
                            a -> a.lake().duplicated(),
                            a -> a.lake().extra(),
                            a -> a.lake().wrong()))
                    .append(" | ")
                    .append(sums(rs, a -> a.problems().size()))
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

        md.append("\nPer metric set: stream rows + the set's events on the backfill topic against the truth after the"
                + " drain; the serving views against the truth after backfill and reconcile.\n\n");
        md.append(
                "| fault | set | events lost | events double-counted | keys differing | served keys wrong (window_metrics"
                        + " / attribution) | exact |\n");
        md.append("|---|---|---|---|---|---|---|\n");
        byFault.forEach((fault, rs) -> {
            Set<String> sets = new LinkedHashSet<>();
            rs.forEach(r -> sets.addAll(r.accounting().sets()));
            for (String set : sets) {
                List<Accounting.SetCount> counts = rs.stream()
                        .flatMap(r -> r.accounting().counts().stream())
                        .filter(c -> c.set().equals(set))
                        .toList();
                List<Accounting.SetServed> served = rs.stream()
                        .flatMap(r -> r.accounting().served(set).stream())
                        .toList();
                boolean attribution = served.stream().anyMatch(v -> v.attributionKeysWrong() >= 0);
                boolean exact = counts.size() == rs.size()
                        && served.size() == rs.size()
                        && counts.stream().allMatch(Accounting.SetCount::clean)
                        && served.stream().allMatch(Accounting.SetServed::clean);
                md.append("| ")
                        .append(fault.name())
                        .append(" | ")
                        .append(set)
                        .append(" | ")
                        .append(counts.stream()
                                .mapToLong(Accounting.SetCount::eventsLost)
                                .sum())
                        .append(" | ")
                        .append(counts.stream()
                                .mapToLong(Accounting.SetCount::eventsDoubled)
                                .sum())
                        .append(" | ")
                        .append(counts.stream()
                                .mapToLong(Accounting.SetCount::keysDiffering)
                                .sum())
                        .append(" | ")
                        .append(served.stream()
                                .mapToLong(Accounting.SetServed::keysWrong)
                                .sum())
                        .append(" / ")
                        .append(
                                attribution
                                        ? Long.toString(served.stream()
                                                .mapToLong(v -> Math.max(0, v.attributionKeysWrong()))
                                                .sum())
                                        : "-")
                        .append(" | ")
                        .append(exact ? "yes" : "**no**")
                        .append(" |\n");
            }
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

    /** Each of {@code parts} summed over the rounds, joined by " / ". */
    @SafeVarargs
    private static String sums(List<RoundResult> rs, ToLongFunction<Accounting.Result>... parts) {
        List<String> out = new ArrayList<>();
        for (ToLongFunction<Accounting.Result> f : parts) {
            out.add(Long.toString(
                    rs.stream().mapToLong(r -> f.applyAsLong(r.accounting())).sum()));
        }
        return String.join(" / ", out);
    }

    private static String seconds(Duration d) {
        return String.format("%.1f s", d.toMillis() / 1000.0);
    }
}
