package dev.recount.core.attribution;

import dev.recount.core.event.AdEvent;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@link AttributionRule} applied to a whole set of events in memory: the reference the generator's ground truth
 * and the tests use. The stream job and the batch layer compute the same thing incrementally and in Spark.
 */
public final class Attribution {
    private final AttributionRule rule;
    /** Request id → its impressions, at most one per event_id. */
    private final Map<String, List<AdEvent>> impressions = new HashMap<>();

    private final List<AdEvent> attributable = new ArrayList<>();
    private final Set<String> seenIds = new HashSet<>();

    public Attribution(AttributionRule rule) {
        this.rule = rule;
    }

    /** Adds a valid event; a further copy of an event_id already added is ignored (the first copy counts). */
    public Attribution add(AdEvent e) {
        if (!seenIds.add(e.eventId)) return this;
        if (AttributionRule.isCandidateImpression(e)) {
            impressions.computeIfAbsent(e.requestId, r -> new ArrayList<>()).add(e);
        } else if (AttributionRule.isAttributable(e)) {
            attributable.add(e);
        }
        return this;
    }

    /** The impression {@code click} is attributed through: the first of its request's in the window, if any. */
    public Optional<AdEvent> impressionOf(AdEvent click) {
        if (click.requestId == null) return Optional.empty();
        AdEvent first = null;
        for (AdEvent i : impressions.getOrDefault(click.requestId, List.of())) {
            if (rule.attributes(i.eventTs, click.eventTs)
                    && (first == null
                            || AttributionRule.precedes(i.eventTs, i.eventId, first.eventTs, first.eventId))) {
                first = i;
            }
        }
        return Optional.ofNullable(first);
    }

    /**
     * The metrics per window key of {@code set} (the window and dimensions of the click or conversion) of the clicks
     * and conversions added, judged against every impression added.
     */
    public Map<WindowKey, AttributionMetrics> perWindow(MetricSet set) {
        Map<WindowKey, AttributionAccumulator> sums = new HashMap<>();
        for (AdEvent e : attributable) {
            WindowKey key = WindowKey.of(set.windows().windowStart(e.eventTs), set.dimensionValues(e));
            sums.computeIfAbsent(key, k -> new AttributionAccumulator())
                    .decided(e, impressionOf(e).isPresent());
        }
        Map<WindowKey, AttributionMetrics> out = new HashMap<>();
        sums.forEach((k, acc) -> {
            if (!acc.isZero()) out.put(k, acc.toMetrics());
        });
        return out;
    }
}
