package dev.recount.stream.attribution;

import dev.recount.core.attribution.AttributionAccumulator;
import dev.recount.core.event.AdEvent;
import dev.recount.stream.sets.SetRules;
import java.util.Arrays;

/**
 * A change to one window key's attribution metrics of one metric set (the set's window of the click or conversion and
 * its dimension values): what {@link AttributionJoin} decides, summed per key by {@link AttributionWindows}. A Flink
 * POJO, in flight only.
 */
public final class AttributionDelta {
    public String set;
    public long windowStart;
    public String[] dimensions;
    public AttributionAccumulator change;

    public AttributionDelta() {}

    public AttributionDelta(String set, long windowStart, String[] dimensions, AttributionAccumulator change) {
        this.set = set;
        this.windowStart = windowStart;
        this.dimensions = dimensions;
        this.change = change;
    }

    /** A click or conversion judged for the first time, for {@code set}. */
    static AttributionDelta decided(AdEvent e, boolean attributed, SetRules set) {
        return of(e, set, new AttributionAccumulator().decided(e, attributed));
    }

    /** A click or conversion judged unattributed before, attributed now, for {@code set}. */
    static AttributionDelta attributedLater(AdEvent e, SetRules set) {
        return of(e, set, new AttributionAccumulator().attributedLater(e));
    }

    private static AttributionDelta of(AdEvent e, SetRules set, AttributionAccumulator change) {
        return new AttributionDelta(
                set.name(), set.time().windowStart(e.eventTs), set.set().dimensionValues(e), change);
    }

    @Override
    public String toString() {
        return "AttributionDelta{" + set + ' ' + windowStart + ' ' + Arrays.toString(dimensions) + ' '
                + change.toMetrics() + '}';
    }
}
