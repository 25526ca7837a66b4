package dev.recount.tools.advise;

import dev.recount.core.config.Durations;
import dev.recount.tools.advise.WatermarkAdvisor.Advice;
import dev.recount.tools.advise.WatermarkAdvisor.Candidate;
import dev.recount.tools.advise.WatermarkAdvisor.PartitionStats;
import dev.recount.tools.advise.WatermarkAdvisor.Recommendation;
import java.io.PrintWriter;
import java.util.Locale;

/** Prints {@link Advice} for a person deciding the watermark settings: the data first, then the choice. */
final class AdviceReport {
    private AdviceReport() {}

    static void print(Advice advice, PrintWriter out) {
        out.println();
        out.println("Arrival delay = Kafka record timestamp - event_ts, per partition (valid, first-seen events):");
        out.printf(
                Locale.ROOT,
                "  %-9s %10s %9s %9s %9s %9s %9s   %-14s %s%n",
                "partition",
                "events",
                "p50",
                "p90",
                "p99",
                "p99.9",
                "max",
                "gap p99.9",
                "largest gaps");
        for (PartitionStats p : advice.partitions()) {
            row(out, String.valueOf(p.partition()), p.delays(), p.gaps());
        }
        row(out, "all", advice.delays(), Distribution.empty());

        Recommendation r = advice.recommendation();
        out.println();
        out.println("Recommended (config/recount.properties keys):");
        out.printf(
                Locale.ROOT,
                "  watermark.out-of-orderness=%-8s # p99 of the delay is %s, rounded up%n",
                Durations.format(r.outOfOrderness()),
                millis(advice.delays().percentile(0.99)));
        out.printf(
                Locale.ROOT,
                "  window.allowed-lateness=%-11s # with out-of-orderness covers the p99.9 delay of %s%n",
                Durations.format(r.allowedLateness()),
                millis(advice.delays().percentile(0.999)));
        out.printf(
                Locale.ROOT,
                "  watermark.idleness=%-16s # largest per-partition p99.9 gap between events is %s%n",
                Durations.format(r.idleness()),
                millis(advice.largestGapP999()));
        if (!advice.gaps().isEmpty() && advice.gaps().max() > r.idleness().toMillis()) {
            out.printf(
                    Locale.ROOT,
                    "  note: %.3f%% of gaps are longer than that (up to %s): a partition goes idle"
                            + " there, so the others' windows close without it%n",
                    100 * advice.gaps().shareAbove(r.idleness().toMillis()),
                    millis(advice.gaps().max()));
        }

        out.println();
        out.println("What each setting would do to these events (replayed in arrival order through per-partition");
        out.println("watermarks; late = arrives after its window fired: re-firing, revision + 1; too late = after");
        out.println("window end + allowed lateness: backfill topic, corrected by the nightly batch):");
        out.printf(
                Locale.ROOT,
                "  %-32s %9s %9s %9s %9s   %-22s %s%n",
                "setting",
                "window",
                "ooo",
                "lateness",
                "idleness",
                "late (re-firing)",
                "too late (backfill)");
        for (Candidate c : advice.candidates()) {
            out.printf(
                    Locale.ROOT,
                    "  %-32s %9s %9s %9s %9s   %-22s %s%n",
                    c.label(),
                    Durations.format(c.settings().windowSize()),
                    Durations.format(c.settings().outOfOrderness()),
                    Durations.format(c.settings().allowedLateness()),
                    Durations.format(c.settings().idleness()),
                    share(c.outcome().late(), c.outcome().lateShare()),
                    share(c.outcome().tooLate(), c.outcome().tooLateShare()));
        }
        out.println();
        out.println("A larger out-of-orderness delays every first result by that much; a larger lateness keeps");
        out.println("window state that much longer. Too-late events are never lost: the backfill corrects them.");
        out.flush();
    }

    private static void row(PrintWriter out, String label, Distribution delays, Distribution gaps) {
        StringBuilder largest = new StringBuilder();
        for (long g : gaps.largest(3)) {
            if (largest.length() > 0) largest.append(", ");
            largest.append(millis(g));
        }
        out.printf(
                Locale.ROOT,
                "  %-9s %10d %9s %9s %9s %9s %9s   %-14s %s%n",
                label,
                delays.count(),
                millis(delays.percentile(0.5)),
                millis(delays.percentile(0.9)),
                millis(delays.percentile(0.99)),
                millis(delays.percentile(0.999)),
                millis(delays.max()),
                gaps.isEmpty() ? "-" : millis(gaps.percentile(0.999)),
                largest);
    }

    private static String share(long count, double share) {
        return String.format(Locale.ROOT, "%.3f%% (%d)", 100 * share, count);
    }

    /** A delay for people: 850ms, 12.3s, 4.5m, 2.0h (negative when event time is ahead of the record time). */
    static String millis(long ms) {
        long abs = Math.abs(ms);
        String sign = ms < 0 ? "-" : "";
        if (abs < 1_000) return sign + abs + "ms";
        if (abs < 60_000) return sign + String.format(Locale.ROOT, "%.1fs", abs / 1_000.0);
        if (abs < 3_600_000) return sign + String.format(Locale.ROOT, "%.1fm", abs / 60_000.0);
        if (abs < 86_400_000) return sign + String.format(Locale.ROOT, "%.1fh", abs / 3_600_000.0);
        return sign + String.format(Locale.ROOT, "%.1fd", abs / 86_400_000.0);
    }
}
