package dev.recount.oracle;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The ground truth of every declared metric set, from the records sent: feed it each record's value and Kafka record
 * timestamp in send order ({@link #accept}), then read {@link #truth()}.
 *
 * <ul>
 *   <li>Each record is judged by {@link EventReader}; invalid ones are counted by reason (the dead letters).</li>
 *   <li>An event_id counts once: its first valid copy; later copies, whatever they hold, change nothing.</li>
 *   <li>Every set counts every unique event in its own windows (docs/contract.md §3, "Metric sets").</li>
 *   <li>Attribution (§3 "Attribution"), for the sets that have it: a click or conversion is attributed when a unique
 *       impression with its request_id has an event_ts in {@code [click_ts - window, click_ts]}, both bounds
 *       included. Per key of the click (the set's window and dimensions of the click): attributed clicks,
 *       attributed conversions, unattributed clicks (no request_id, or no such impression), and the cost_micros of
 *       the attributed clicks and conversions. A conversion not attributed counts nowhere; a key whose four values
 *       are all 0 is not a row.</li>
 * </ul>
 *
 * It keeps every event_id it has seen, and with attribution every impression's request id and time and every click
 * and conversion: memory grows with the traffic, a few hundred bytes per event.
 */
public final class Oracle {
    /** What became of one record. */
    public enum Verdict {
        /** A valid event, counted: the first valid copy of its event_id. */
        COUNTED,
        /** A valid copy of an event_id already counted. */
        DUPLICATE,
        MALFORMED,
        SCHEMA,
        TIMESTAMP;

        public boolean isInvalid() {
            return this != COUNTED && this != DUPLICATE;
        }

        /** The dead letter's {@code reason}. */
        public String reason() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final Definitions definitions;
    private final OracleSettings settings;
    private final EventReader reader;
    private final List<SetCounter> counters = new ArrayList<>();
    private final Set<String> counted = new HashSet<>();
    /** Request id → event times of its unique impressions (only when a set computes attribution). */
    private final Map<String, List<Long>> impressions = new HashMap<>();

    private final List<Event> clicksAndConversions = new ArrayList<>();
    private final Map<String, Long> invalidByReason = new TreeMap<>();
    private long records;
    private long duplicates;

    public Oracle(Definitions definitions, OracleSettings settings) {
        this.definitions = definitions;
        this.settings = settings;
        this.reader = new EventReader(definitions.attributes(), settings);
        for (Definitions.MetricSet s : definitions.sets()) counters.add(new SetCounter(s));
    }

    /** One record as sent: its value (null for a record without one) and its Kafka record timestamp. */
    public Verdict accept(byte[] value, long recordTs) {
        records++;
        EventReader.Reading r = reader.read(value, recordTs);
        if (!r.isValid()) {
            invalidByReason.merge(r.invalidReason(), 1L, Long::sum);
            return Verdict.valueOf(r.invalidReason().toUpperCase(java.util.Locale.ROOT));
        }
        Event e = r.event();
        if (!counted.add(e.eventId())) {
            duplicates++;
            return Verdict.DUPLICATE;
        }
        for (SetCounter c : counters) c.add(e);
        if (definitions.anyAttribution()) {
            if (e.eventType().equals("impression") && e.requestId() != null) {
                impressions
                        .computeIfAbsent(e.requestId(), k -> new ArrayList<>())
                        .add(e.eventTs());
            } else if (!e.eventType().equals("impression")) {
                clicksAndConversions.add(e);
            }
        }
        return Verdict.COUNTED;
    }

    public Truth truth() {
        List<SetTruth> sets = new ArrayList<>();
        for (SetCounter c : counters) {
            sets.add(new SetTruth(c.set(), c.rows(), c.set().attribution() ? attribution(c) : null));
        }
        return new Truth(sets, invalidByReason, records, counted.size(), duplicates);
    }

    /** Attribution per key of {@code counter}'s set: the four values of {@link SetTruth#ATTRIBUTION_COLUMNS}. */
    private SortedMap<Key, List<BigInteger>> attribution(SetCounter counter) {
        Map<Key, BigInteger[]> sums = new HashMap<>();
        long window = settings.attributionWindow().toMillis();
        for (Event e : clicksAndConversions) {
            boolean click = e.eventType().equals("click");
            boolean attributed = e.requestId() != null
                    && impressions.getOrDefault(e.requestId(), List.of()).stream()
                            .anyMatch(ts -> ts <= e.eventTs() && e.eventTs() - ts <= window);
            if (!attributed && !click) continue; // an unattributed conversion counts nowhere
            BigInteger[] row = sums.computeIfAbsent(counter.keyOf(e), k -> SetCounter.zeros(4));
            int column = attributed ? (click ? 0 : 1) : 2;
            row[column] = row[column].add(BigInteger.ONE);
            if (attributed) row[3] = row[3].add(BigInteger.valueOf(e.costMicros()));
        }
        SortedMap<Key, List<BigInteger>> out = new TreeMap<>();
        sums.forEach((k, v) -> out.put(k, List.of(v)));
        return out;
    }
}
