package dev.recount.stream;

import dev.recount.core.event.InvalidReason;
import dev.recount.stream.route.DedupAndRouteTooLate;
import dev.recount.stream.route.LateAtWindowToBackfill;
import dev.recount.stream.route.RouteInvalidRecords;
import dev.recount.stream.window.WindowMetricsOperator;
import java.util.Map;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.RuntimeContext;

/**
 * Job-wide totals of the job's counters, as Flink accumulators: summed over all subtasks, readable while the job
 * runs ({@code JobClient#getAccumulators}, REST {@code /jobs/<id>/accumulators}) and in the final result, which the
 * metrics (per subtask, lost when the job ends) are not. Named like the metrics.
 *
 * <p>They count what the current attempt processed: after a failover Flink starts them again from zero (and the
 * replayed records are counted again), so they describe a run, not the exactly-once results.
 */
public final class JobTotals {
    private JobTotals() {}

    public static String invalid(InvalidReason reason) {
        return RouteInvalidRecords.INVALID_EVENTS_METRIC + "." + reason.wireName();
    }

    public static LongCounter counter(RuntimeContext context, String name) {
        LongCounter counter = new LongCounter();
        context.addAccumulator(name, counter);
        return counter;
    }

    /** One line for people: "valid 1,000, invalid 12 (malformed 5, schema 6, timestamp 1), ...". */
    public static String summary(Map<String, Object> accumulators) {
        StringBuilder invalid = new StringBuilder();
        long invalidTotal = 0;
        for (InvalidReason r : InvalidReason.values()) {
            long n = get(accumulators, invalid(r));
            invalidTotal += n;
            invalid.append(invalid.length() == 0 ? "" : ", ").append(r.wireName()).append(' ').append(String.format("%,d", n));
        }
        return String.format("valid events %,d; invalid %,d (%s); duplicates dropped %,d; too late %,d; "
                        + "window firings %,d (late re-firings %,d)",
                get(accumulators, RouteInvalidRecords.VALID_EVENTS_METRIC), invalidTotal, invalid,
                get(accumulators, DedupAndRouteTooLate.DUPLICATES_METRIC),
                get(accumulators, DedupAndRouteTooLate.TOO_LATE_METRIC) + get(accumulators, LateAtWindowToBackfill.METRIC),
                get(accumulators, WindowMetricsOperator.FIRINGS_METRIC),
                get(accumulators, WindowMetricsOperator.LATE_REFIRINGS_METRIC));
    }

    /** One total from {@code accumulators} (a JobClient's or a JobExecutionResult's), 0 if not reported yet. */
    public static long get(Map<String, Object> accumulators, String name) {
        return accumulators.get(name) instanceof Number n ? n.longValue() : 0L;
    }
}
