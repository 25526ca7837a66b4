package dev.recount.stream.metrics;

import dev.recount.core.event.InvalidReason;
import java.util.Map;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.metrics.MetricGroup;

/**
 * Job-wide totals of the job's counters, as Flink accumulators: summed over all subtasks, readable while the job
 * runs ({@code JobClient#getAccumulators}, REST {@code /jobs/<id>/accumulators}) and in the final result, which the
 * metrics (per subtask, lost when the job ends) are not.
 *
 * <p>The names below are both the accumulators' and the operators' metrics' names (dashboards and alerts read the
 * metrics by them: never rename one). They live here, in a package that depends on no operator, so the operators
 * that count and {@link #summary} that reads the totals share them without depending on each other.
 *
 * <p>They count what the current attempt processed: after a failover Flink starts them again from zero (and the
 * replayed records are counted again), so they describe a run, not the exactly-once results.
 */
public final class JobTotals {
    /** Valid events, counted where invalid records are routed to dead letters. */
    public static final String VALID_EVENTS = "validEvents";
    /** Invalid records; the metric has a {@code reason} group, the accumulators a suffix ({@link #invalid}). */
    public static final String INVALID_EVENTS = "invalidEvents";
    /** Copies of an event id already seen, dropped by the de-duplication. */
    public static final String DUPLICATES_DROPPED = "duplicatesDropped";
    /** Events too late for their window, routed to the backfill topic by the de-duplication. */
    public static final String TOO_LATE_EVENTS = "tooLateEvents";
    /** Window partials that reached the window operator too late (routed to the backfill topic as a whole). */
    public static final String TOO_LATE_AT_WINDOW = "tooLateAtWindow";
    /** Windows fired. */
    public static final String WINDOW_FIRINGS = "windowFirings";
    /** Windows fired again because late events arrived within the allowed lateness. */
    public static final String LATE_REFIRINGS = "lateRefirings";

    /**
     * The metric variable that labels a metric set's own counters ({@link #WINDOW_FIRINGS}, {@link #LATE_REFIRINGS},
     * {@link #TOO_LATE_EVENTS}, {@link #TOO_LATE_AT_WINDOW}): a key/value group, so a reporter shows e.g.
     * {@code windowFirings{metric_set="campaign_slot"}} beside the operator's total of the same name.
     */
    public static final String SET_VARIABLE = "metric_set";

    private JobTotals() {}

    /** The metric group of {@code set}'s counters under {@code operator}'s group. */
    public static MetricGroup setGroup(MetricGroup operator, String set) {
        return operator.addGroup(SET_VARIABLE, set);
    }

    /** The accumulator of invalid records for one reason, e.g. {@code invalidEvents.malformed}. */
    public static String invalid(InvalidReason reason) {
        return INVALID_EVENTS + "." + reason.wireName();
    }

    /** Registers the job-wide total {@code name} for this subtask. */
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
            invalid.append(invalid.length() == 0 ? "" : ", ")
                    .append(r.wireName())
                    .append(' ')
                    .append(String.format("%,d", n));
        }
        return String.format(
                "valid events %,d; invalid %,d (%s); duplicates dropped %,d; too late %,d; "
                        + "window firings %,d (late re-firings %,d)",
                get(accumulators, VALID_EVENTS),
                invalidTotal,
                invalid,
                get(accumulators, DUPLICATES_DROPPED),
                get(accumulators, TOO_LATE_EVENTS) + get(accumulators, TOO_LATE_AT_WINDOW),
                get(accumulators, WINDOW_FIRINGS),
                get(accumulators, LATE_REFIRINGS));
    }

    /** One total from {@code accumulators} (a JobClient's or a JobExecutionResult's), 0 if not reported yet. */
    public static long get(Map<String, Object> accumulators, String name) {
        return accumulators.get(name) instanceof Number n ? n.longValue() : 0L;
    }
}
