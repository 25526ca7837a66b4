package dev.recount.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.faults.Outputs.LakeRow;
import dev.recount.faults.Outputs.TopicRecord;
import dev.recount.oracle.Definitions;
import dev.recount.oracle.EventReader;
import dev.recount.oracle.Key;
import dev.recount.oracle.SetCounter;
import dev.recount.oracle.SetTruth;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The judge: every output of a pipeline against what was sent ({@link Sent}: the input topic as the oracle judges
 * it), the way finance would, comparing by identity — event ids, Kafka coordinates, payloads, keys and measure values
 * — never by counts alone. Pure functions over data ({@link Outputs}); {@link OutputReader} reads the data.
 *
 * <ul>
 *   <li>Per metric set: its stream rows plus the events on the backfill topic that name the set make its truth, key by
 *       key and measure by measure (what is missing was lost, what is extra was counted twice).</li>
 *   <li>The backfill topic: each record carries the event read at its coordinates, payload and all, names every set
 *       at most once per event id, each with the set's window of the event, judged too late at a watermark past it;
 *       no record of an event never sent as valid.</li>
 *   <li>The dead letters: one per invalid record, at its coordinates, with the oracle's reason.</li>
 *   <li>The lake: every valid record sent (first copies and later ones) exactly once, at its coordinates, with its
 *       payload (the attributes column: every field sent beyond the contract); what the stream recorded as archived
 *       per lake hour (lake_archived_rows) is what the hour's files hold.</li>
 *   <li>After backfill and reconcile: every set's serving view equals its truth, and its attribution view where the
 *       set has attribution.</li>
 * </ul>
 */
final class Accounting {
    /** How many examples each finding keeps: enough to see what went wrong, not a whole diff. */
    static final int EXAMPLES = 5;

    /** What the stream job must never log: the connectors' data-loss warnings, refused rows, failed commits. */
    private static final Pattern BAD_LOG = Pattern.compile(
            "(?i)data loss|refused to replace|unable to commit transaction|PostgreSQL refused|too late at the window operator");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long HOUR_MILLIS = 3_600_000L;

    private Accounting() {}

    // --- findings -------------------------------------------------------------------------------------------------

    /**
     * One set's stream accounting: stream rows + backfill events of the set against its truth.
     *
     * @param keys keys of any of the three sides
     * @param keysDiffering keys whose values differ in any measure (those with as many events but other values too)
     */
    record SetCount(
            String set,
            long keys,
            long streamRows,
            long eventsLost,
            long eventsDoubled,
            long keysDiffering,
            List<String> examples) {
        boolean clean() {
            return eventsLost == 0 && eventsDoubled == 0 && keysDiffering == 0;
        }
    }

    /**
     * One set's serving views against its truth after backfill and reconcile.
     *
     * @param attributionKeysWrong -1 when the set has no attribution
     */
    record SetServed(String set, long keys, long keysWrong, long attributionKeysWrong, List<String> examples) {
        boolean clean() {
            return keysWrong == 0 && attributionKeysWrong <= 0;
        }
    }

    /**
     * The backfill topic.
     *
     * @param duplicates records naming a set for an event id another record named it for already
     * @param unknown records of an event id never sent as a valid event
     * @param wrongPayload records whose event is not the valid record at the coordinates they name (or not valid)
     * @param wrongWindow set windows that are not the set's window of the event, name an undeclared set, or were
     *     judged too late at a watermark inside the window
     * @param counted per set, the rows the records' own events make (their payloads, not the truth's copies)
     */
    record Backfill(
            long records,
            long duplicates,
            long unknown,
            long wrongPayload,
            long wrongWindow,
            List<String> examples,
            Map<String, SortedMap<Key, List<BigInteger>>> counted) {
        boolean clean() {
            return duplicates == 0 && unknown == 0 && wrongPayload == 0 && wrongWindow == 0;
        }
    }

    /**
     * The dead-letter topic.
     *
     * @param lost invalid records sent without a dead letter at their coordinates
     * @param extra dead letters of no invalid record (a valid one, none, a second one of the same, or a rejected row)
     * @param wrongReason dead letters at an invalid record's coordinates with another reason than the oracle's
     */
    record DeadLetters(long records, long lost, long extra, long wrongReason, List<String> examples) {
        boolean clean() {
            return lost == 0 && extra == 0 && wrongReason == 0;
        }
    }

    /**
     * The lake.
     *
     * @param missing valid records sent that no row holds at their coordinates
     * @param duplicated rows at coordinates another row holds already
     * @param extra rows at coordinates where no valid record was sent
     * @param wrong rows at a valid record's coordinates whose columns are not that record's
     */
    record Lake(long rows, long missing, long duplicated, long extra, long wrong, List<String> examples) {
        boolean clean() {
            return missing == 0 && duplicated == 0 && extra == 0 && wrong == 0;
        }
    }

    /** Everything the judge found in one round; clean means the promise held. */
    record Result(
            List<SetCount> counts,
            Backfill backfill,
            DeadLetters deadLetters,
            Lake lake,
            List<SetServed> served,
            List<String> problems) {
        Result {
            counts = List.copyOf(counts);
            served = List.copyOf(served);
            problems = List.copyOf(problems);
        }

        /** A round that did not get as far as the judge. */
        static Result notJudged(String why) {
            return new Result(
                    List.of(),
                    new Backfill(0, 0, 0, 0, 0, List.of(), Map.of()),
                    new DeadLetters(0, 0, 0, 0, List.of()),
                    new Lake(0, 0, 0, 0, 0, List.of()),
                    List.of(),
                    List.of(why));
        }

        boolean clean() {
            return counts.stream().allMatch(SetCount::clean)
                    && backfill.clean()
                    && deadLetters.clean()
                    && lake.clean()
                    && served.stream().allMatch(SetServed::clean)
                    && problems.isEmpty();
        }

        Result withServed(List<SetServed> s) {
            return new Result(counts, backfill, deadLetters, lake, s, problems);
        }

        Result withProblems(List<String> more) {
            List<String> all = new ArrayList<>(problems);
            all.addAll(more);
            return new Result(counts, backfill, deadLetters, lake, served, all);
        }

        /** The set's served verdict, if the round got that far. */
        Optional<SetServed> served(String set) {
            return served.stream().filter(s -> s.set().equals(set)).findFirst();
        }

        /** Every set the round judged, in the definitions' order. */
        List<String> sets() {
            List<String> names = new ArrayList<>();
            counts.forEach(c -> names.add(c.set()));
            served.forEach(s -> {
                if (!names.contains(s.set())) names.add(s.set());
            });
            return names;
        }

        @Override
        public String toString() {
            StringBuilder s = new StringBuilder();
            for (SetCount c : counts) {
                s.append(c.set())
                        .append(": lost ")
                        .append(c.eventsLost())
                        .append(", doubled ")
                        .append(c.eventsDoubled())
                        .append(", keys differing ")
                        .append(c.keysDiffering())
                        .append(" of ")
                        .append(c.keys());
                served(c.set())
                        .ifPresent(v -> s.append(", served keys wrong ")
                                .append(v.keysWrong())
                                .append(
                                        v.attributionKeysWrong() < 0
                                                ? ""
                                                : ", attribution keys wrong " + v.attributionKeysWrong()));
                s.append("; ");
            }
            s.append(String.format(
                    "backfill %d records: duplicates %d, unknown %d, wrong payload %d, wrong window %d; dead letters"
                            + " %d: lost %d, extra %d, wrong reason %d; lake %d rows: missing %d, duplicated %d,"
                            + " extra %d, wrong %d; problems %s",
                    backfill.records(),
                    backfill.duplicates(),
                    backfill.unknown(),
                    backfill.wrongPayload(),
                    backfill.wrongWindow(),
                    deadLetters.records(),
                    deadLetters.lost(),
                    deadLetters.extra(),
                    deadLetters.wrongReason(),
                    lake.rows(),
                    lake.missing(),
                    lake.duplicated(),
                    lake.extra(),
                    lake.wrong(),
                    problems));
            List<String> examples = new ArrayList<>();
            counts.forEach(c -> examples.addAll(c.examples()));
            examples.addAll(backfill.examples());
            examples.addAll(deadLetters.examples());
            examples.addAll(lake.examples());
            served.forEach(v -> examples.addAll(v.examples()));
            if (!examples.isEmpty()) s.append("; e.g. ").append(String.join("; ", examples));
            return s.toString();
        }
    }

    // --- the judge ------------------------------------------------------------------------------------------------

    /**
     * The stream's outputs after it drained, against what was sent.
     *
     * @param countedFrom per set, the first window start the stream is to have counted (a set added to a running
     *     deployment counts from its first window after the restart; its earlier windows are the batch layer's);
     *     sets not named: every window
     */
    static Result afterDrain(Sent sent, Outputs.AfterDrain out, Map<String, Long> countedFrom) {
        Backfill backfill = backfill(sent, out.backfill());
        List<SetCount> counts = new ArrayList<>();
        for (SetTruth truth : sent.truth().sets()) {
            SortedMap<Key, List<BigInteger>> stream =
                    out.streamRows().getOrDefault(truth.name(), Collections.emptySortedMap());
            SortedMap<Key, List<BigInteger>> late =
                    backfill.counted().getOrDefault(truth.name(), Collections.emptySortedMap());
            SetCount c = count(truth, stream, late, countedFrom.getOrDefault(truth.name(), Long.MIN_VALUE));
            if (c.eventsDoubled() > 0) c = withDoubledExplained(c, truth, stream, late, sent, out);
            counts.add(c);
        }
        for (String set : out.streamRows().keySet()) {
            if (counts.stream().noneMatch(c -> c.set().equals(set)))
                throw new IllegalArgumentException("stream rows of a set the definitions do not declare: " + set);
        }
        List<String> problems = new ArrayList<>(logProblems(out.streamLogs()));
        problems.addAll(ledger(out.lake(), out.archivedByHour()));
        return new Result(
                counts, backfill, deadLetters(sent, out.deadLetters()), lake(sent, out.lake()), List.of(), problems);
    }

    /** Every set's stream rows + backfill events against its truth, from window {@code from} on. */
    static SetCount count(
            SetTruth truth,
            SortedMap<Key, List<BigInteger>> stream,
            SortedMap<Key, List<BigInteger>> backfill,
            long from) {
        List<String> measures = truth.set().measureNames();
        int events = measures.indexOf(Definitions.EVENTS);
        TreeSet<Key> keys = new TreeSet<>();
        for (Map<Key, ?> side : List.of(truth.rows(), stream, backfill)) {
            side.keySet().stream().filter(k -> k.windowStart() >= from).forEach(keys::add);
        }
        List<BigInteger> zeros = Collections.nCopies(measures.size(), BigInteger.ZERO);
        long lost = 0;
        long doubled = 0;
        long differing = 0;
        List<String> examples = new ArrayList<>();
        for (Key k : keys) {
            List<BigInteger> want = truth.rows().getOrDefault(k, zeros);
            List<BigInteger> row = stream.getOrDefault(k, zeros);
            List<BigInteger> late = backfill.getOrDefault(k, zeros);
            List<BigInteger> counted = plus(row, late);
            if (counted.equals(want)) continue;
            differing++;
            long diff = counted.get(events).subtract(want.get(events)).longValueExact();
            if (diff < 0) lost -= diff;
            if (diff > 0) doubled += diff;
            example(
                    examples,
                    truth.name() + " " + describe(k) + ": truth " + values(measures, want) + "; stream row "
                            + values(measures, row) + " + backfill " + values(measures, late));
        }
        long rows =
                stream.keySet().stream().filter(k -> k.windowStart() >= from).count();
        return new SetCount(truth.name(), keys.size(), rows, lost, doubled, differing, examples);
    }

    /**
     * {@code c} with, for its first doubled key, where the key's backfill records came from and every lake copy of
     * their ids: whether a second copy outlived the de-dup horizon, or one record was routed both ways.
     */
    private static SetCount withDoubledExplained(
            SetCount c,
            SetTruth truth,
            SortedMap<Key, List<BigInteger>> stream,
            SortedMap<Key, List<BigInteger>> late,
            Sent sent,
            Outputs.AfterDrain out) {
        SetCounter keys = new SetCounter(truth.set());
        EventReader reader = new EventReader(sent.definitions().attributes(), sent.settings());
        int events = truth.set().measureNames().indexOf(Definitions.EVENTS);
        Key doubled = null;
        List<String> detail = new ArrayList<>();
        for (TopicRecord r : out.backfill()) {
            BackfillEntry b;
            try {
                b = parseBackfill(r.value());
            } catch (IllegalArgumentException e) {
                continue;
            }
            if (b.sets().stream().noneMatch(w -> w.set().equals(truth.name()))) continue;
            EventReader.Reading reading = reader.read(
                    b.event().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    b.event().path("event_ts").asLong());
            if (!reading.isValid()) continue;
            Key k = keys.keyOf(reading.event());
            BigInteger counted = eventsOf(stream.get(k), events).add(eventsOf(late.get(k), events));
            boolean over = stream.containsKey(k)
                    && counted.compareTo(eventsOf(truth.rows().get(k), events)) > 0;
            if (!over || (doubled != null && !doubled.equals(k))) continue;
            doubled = k;
            String id = reading.event().eventId();
            List<String> copies = new ArrayList<>();
            for (LakeRow l : out.lake()) {
                if (l.eventId().equals(id)) copies.add(l.at() + " sent " + instant(l.recordTs()));
            }
            detail.add("backfill " + id + " read at " + b.readAt() + ", judged at watermark " + instant(b.watermark())
                    + ", lake copies " + copies);
        }
        if (detail.isEmpty()) return c;
        List<String> examples = new ArrayList<>(c.examples());
        examples.add(truth.name() + " " + describe(doubled) + " has a stream row and: " + String.join("; ", detail));
        return new SetCount(
                c.set(), c.keys(), c.streamRows(), c.eventsLost(), c.eventsDoubled(), c.keysDiffering(), examples);
    }

    private static BigInteger eventsOf(List<BigInteger> row, int events) {
        return row == null ? BigInteger.ZERO : row.get(events);
    }

    /** A record of the backfill topic as the judge reads it: its own fields, nothing of recount's parser. */
    record BackfillEntry(ObjectNode event, List<SetWindow> sets, long watermark, Coordinates readAt) {}

    /** A set's window a backfill record names. */
    record SetWindow(String set, long start, long end) {}

    /** @throws IllegalArgumentException what is missing or of the wrong type */
    static BackfillEntry parseBackfill(byte[] value) {
        try {
            JsonNode n = JSON.readTree(value);
            if (n == null || !n.isObject()) throw new IllegalArgumentException("not a JSON object");
            if (!(n.get("event") instanceof ObjectNode event)) throw new IllegalArgumentException("no event object");
            List<SetWindow> sets = new ArrayList<>();
            JsonNode named = n.get("sets");
            if (named == null || !named.isArray() || named.isEmpty())
                throw new IllegalArgumentException("no sets array");
            for (JsonNode s : named) {
                sets.add(new SetWindow(
                        s.required("set").asText(),
                        s.required("window_start").asLong(),
                        s.required("window_end").asLong()));
            }
            return new BackfillEntry(
                    event,
                    sets,
                    n.required("watermark").asLong(),
                    new Coordinates(
                            n.required("topic").asText(),
                            n.required("partition").asInt(),
                            n.required("offset").asLong()));
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
        }
    }

    /**
     * The backfill topic against what was sent, and the rows its events make per set. A record counts by its own
     * payload, so a wrong payload shows in the keys it touches too.
     */
    static Backfill backfill(Sent sent, List<TopicRecord> records) {
        Map<String, SetCounter> counters = new LinkedHashMap<>();
        for (Definitions.MetricSet s : sent.definitions().sets()) counters.put(s.name(), new SetCounter(s));
        EventReader reader = new EventReader(sent.definitions().attributes(), sent.settings());
        Set<String> named = new HashSet<>();
        long duplicates = 0;
        long unknown = 0;
        long wrongPayload = 0;
        long wrongWindow = 0;
        List<String> examples = new ArrayList<>();
        for (TopicRecord r : records) {
            BackfillEntry b;
            try {
                b = parseBackfill(r.value());
            } catch (IllegalArgumentException e) {
                wrongPayload++;
                example(examples, "backfill record " + r.at() + " unreadable: " + e.getMessage());
                continue;
            }
            String id = Payloads.text(b.event(), "event_id");
            List<Sent.Valid> copies = id == null ? List.of() : sent.copiesOf(id);
            if (copies.isEmpty()) {
                unknown++;
                example(examples, "backfill record " + r.at() + " of event " + id + ", never sent as a valid event");
                continue;
            }
            Sent.Valid at = sent.valid().get(b.readAt());
            if (at == null || !at.eventId().equals(id)) {
                wrongPayload++;
                example(
                        examples,
                        "backfill record " + r.at() + " of event " + id + " says it was read at " + b.readAt()
                                + ", which holds " + (at == null ? "no valid record" : "event " + at.eventId())
                                + "; sent at "
                                + copies.stream().map(Sent.Valid::at).toList());
            } else if (!Payloads.same(Payloads.backfillEvent(at.payload()), b.event())) {
                wrongPayload++;
                example(
                        examples,
                        "backfill record " + r.at() + " carries " + b.event() + ", the record at " + b.readAt() + " is "
                                + at.payload());
            }
            EventReader.Reading reading = reader.read(
                    b.event().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    b.event().path("event_ts").asLong());
            if (!reading.isValid()) {
                wrongPayload++;
                example(examples, "backfill record " + r.at() + ": its event is " + reading.invalidReason());
                continue;
            }
            for (SetWindow w : b.sets()) {
                SetCounter counter = counters.get(w.set());
                if (counter == null) {
                    wrongWindow++;
                    example(examples, "backfill record " + r.at() + " names set " + w.set() + ", not declared");
                    continue;
                }
                if (!named.add(w.set() + '\u0000' + id)) {
                    duplicates++;
                    example(
                            examples,
                            "event " + id + " on the backfill topic for set " + w.set() + " again at " + r.at());
                    continue;
                }
                Key key = counter.keyOf(reading.event());
                long end = key.windowStart() + counter.set().windowMillis();
                if (w.start() != key.windowStart() || w.end() != end) {
                    wrongWindow++;
                    example(
                            examples,
                            "backfill record " + r.at() + " names " + w.set() + " window [" + instant(w.start()) + ", "
                                    + instant(w.end()) + "), event " + id + " is in [" + instant(key.windowStart())
                                    + ", " + instant(end) + ")");
                } else if (b.watermark() < w.end() - 1) {
                    wrongWindow++;
                    example(
                            examples,
                            "backfill record " + r.at() + " judged too late for " + w.set() + " window ["
                                    + instant(w.start()) + ", " + instant(w.end()) + ") at watermark "
                                    + instant(b.watermark()) + ", inside it");
                }
                counter.add(reading.event());
            }
        }
        Map<String, SortedMap<Key, List<BigInteger>>> counted = new LinkedHashMap<>();
        counters.forEach((set, c) -> counted.put(set, c.rows()));
        return new Backfill(records.size(), duplicates, unknown, wrongPayload, wrongWindow, examples, counted);
    }

    /** The dead letters against the invalid records sent, by coordinates and reason. */
    static DeadLetters deadLetters(Sent sent, List<TopicRecord> records) {
        Map<Coordinates, String> expected = sent.invalid();
        Set<Coordinates> seen = new HashSet<>();
        long extra = 0;
        long wrongReason = 0;
        List<String> examples = new ArrayList<>();
        for (TopicRecord r : records) {
            JsonNode n;
            try {
                n = JSON.readTree(r.value());
            } catch (IOException e) {
                extra++;
                example(examples, "dead letter " + r.at() + " is not JSON");
                continue;
            }
            String reason = n.path("reason").asText("?");
            if (!n.has("topic") || !n.has("partition") || !n.has("offset")) {
                extra++;
                example(
                        examples,
                        "dead letter " + r.at() + " (" + reason + ") names no input record: "
                                + n.path("detail").asText(""));
                continue;
            }
            Coordinates at = new Coordinates(
                    n.get("topic").asText(),
                    n.get("partition").asInt(),
                    n.get("offset").asLong());
            String want = expected.get(at);
            if (!seen.add(at)) {
                extra++;
                example(examples, "a second dead letter of " + at + " at " + r.at());
            } else if (want == null) {
                extra++;
                example(
                        examples,
                        "dead letter " + r.at() + " (" + reason + ") of " + at + ", "
                                + (sent.valid().containsKey(at) ? "a valid record" : "no record sent"));
            } else if (!want.equals(reason)) {
                wrongReason++;
                example(examples, "dead letter of " + at + " says " + reason + ", the record is " + want);
            }
        }
        long lost = 0;
        for (Map.Entry<Coordinates, String> e : expected.entrySet()) {
            if (seen.contains(e.getKey())) continue;
            lost++;
            example(examples, "no dead letter of " + e.getKey() + " (" + e.getValue() + ")");
        }
        return new DeadLetters(records.size(), lost, extra, wrongReason, examples);
    }

    /** The lake's rows against the valid records sent, by coordinates and every column. */
    static Lake lake(Sent sent, List<LakeRow> rows) {
        Set<Coordinates> seen = new HashSet<>();
        long duplicated = 0;
        long extra = 0;
        long wrong = 0;
        List<String> examples = new ArrayList<>();
        for (LakeRow row : rows) {
            if (!seen.add(row.at())) {
                duplicated++;
                example(examples, "lake holds " + row.at() + " (event " + row.eventId() + ") again");
                continue;
            }
            Sent.Valid v = sent.valid().get(row.at());
            if (v == null) {
                extra++;
                example(
                        examples,
                        "lake row at " + row.at() + " (event " + row.eventId() + "): "
                                + (sent.invalid().containsKey(row.at()) ? "an invalid record" : "no record")
                                + " was sent there");
                continue;
            }
            String difference = difference(v, row);
            if (difference != null) {
                wrong++;
                example(examples, "lake row at " + row.at() + ": " + difference);
            }
        }
        long missing = 0;
        for (Sent.Valid v : sent.valid().values()) {
            if (seen.contains(v.at())) continue;
            missing++;
            example(examples, "the lake lacks " + v.at() + " (event " + v.eventId() + ")");
        }
        return new Lake(rows.size(), missing, duplicated, extra, wrong, examples);
    }

    /** The columns of {@code row} that are not those of the record sent; null when all are. */
    private static String difference(Sent.Valid sent, LakeRow row) {
        ObjectNode p = sent.payload();
        Map<String, Object[]> columns = new LinkedHashMap<>();
        columns.put("event_id", new Object[] {Payloads.text(p, "event_id"), row.eventId()});
        columns.put("event_type", new Object[] {Payloads.text(p, "event_type"), row.eventType()});
        columns.put("event_ts", new Object[] {p.path("event_ts").asLong(), row.eventTs()});
        columns.put("campaign_id", new Object[] {Payloads.text(p, "campaign_id"), row.campaignId()});
        columns.put("channel_id", new Object[] {Payloads.text(p, "channel_id"), row.channelId()});
        columns.put("cost_micros", new Object[] {p.path("cost_micros").asLong(), row.costMicros()});
        columns.put("request_id", new Object[] {Payloads.text(p, "request_id"), row.requestId()});
        columns.put("record_ts", new Object[] {sent.timestamp(), row.recordTs()});
        List<String> differ = new ArrayList<>();
        columns.forEach((name, pair) -> {
            if (!Objects.equals(pair[0], pair[1])) differ.add(name + " " + pair[1] + " instead of " + pair[0]);
        });
        ObjectNode want = Payloads.attributes(p);
        JsonNode got;
        try {
            got = row.attributes() == null ? null : JSON.readTree(row.attributes());
        } catch (IOException e) {
            got = JSON.getNodeFactory().textNode(row.attributes());
        }
        if (!Payloads.same(want, got)) differ.add("attributes " + got + " instead of " + want);
        return differ.isEmpty() ? null : String.join(", ", differ);
    }

    /**
     * What the stream recorded as archived per lake hour against the rows the lake's files hold in that hour: equal,
     * or the batch layer would refuse a complete lake (more recorded: a count committed twice, or for a checkpoint
     * that failed) or miss a loss (fewer: a count lost). One problem per hour that differs.
     */
    static List<String> ledger(List<LakeRow> rows, Map<Long, Long> archivedByHour) {
        Map<Long, Long> inLake = new TreeMap<>();
        for (LakeRow r : rows) inLake.merge(Math.floorDiv(r.eventTs(), HOUR_MILLIS) * HOUR_MILLIS, 1L, Long::sum);
        TreeSet<Long> hours = new TreeSet<>(inLake.keySet());
        hours.addAll(archivedByHour.keySet());
        List<String> problems = new ArrayList<>();
        for (long hour : hours) {
            long files = inLake.getOrDefault(hour, 0L);
            long recorded = archivedByHour.getOrDefault(hour, 0L);
            if (files != recorded && problems.size() < EXAMPLES) {
                problems.add("lake_archived_rows: hour " + instant(hour) + " recorded " + recorded
                        + " rows, its files hold " + files);
            }
        }
        return problems;
    }

    /** The lines of the job's logs that must never be there (a few). */
    static List<String> logProblems(String logs) {
        List<String> problems = new ArrayList<>();
        for (String line : logs.split("\\R")) {
            if (BAD_LOG.matcher(line).find() && problems.size() < EXAMPLES) problems.add(line.strip());
        }
        return problems;
    }

    /**
     * The input topic against the records the round meant to send (produce sends each line of its file exactly once,
     * the round the records with their own record timestamps): a difference is the harness's, not the pipeline's, but
     * the truth would then not be the traffic the round describes.
     */
    static List<String> input(List<byte[]> intended, List<Sent.InputRecord> onTopic) {
        Map<ByteBuffer, Long> balance = new HashMap<>();
        intended.forEach(v -> balance.merge(ByteBuffer.wrap(v), 1L, Long::sum));
        onTopic.forEach(
                r -> balance.merge(ByteBuffer.wrap(r.value() == null ? new byte[0] : r.value()), -1L, Long::sum));
        long missing =
                balance.values().stream().filter(n -> n > 0).mapToLong(n -> n).sum();
        long extra =
                -balance.values().stream().filter(n -> n < 0).mapToLong(n -> n).sum();
        List<String> problems = new ArrayList<>();
        if (missing > 0) problems.add("input topic: " + missing + " record(s) of the traffic never reached it");
        if (extra > 0) problems.add("input topic: " + extra + " record(s) more than the traffic holds");
        return problems;
    }

    /**
     * The first backfill record judged too late at a watermark ahead of {@code clock} (a producer clock ahead of the
     * wall clock must never move the watermark past it).
     */
    static Optional<String> judgedAheadOf(long clock, List<TopicRecord> backfill) {
        for (TopicRecord r : backfill) {
            BackfillEntry b = parseBackfill(r.value());
            if (b.watermark() > clock) {
                return Optional.of("event " + Payloads.text(b.event(), "event_id") + " judged too late at watermark "
                        + instant(b.watermark()) + ", ahead of the clock");
            }
        }
        return Optional.empty();
    }

    /** After backfill and reconcile: every set's serving views against its truth, key by key. */
    static List<SetServed> served(Sent sent, Outputs.Served served) {
        List<SetServed> out = new ArrayList<>();
        for (SetTruth truth : sent.truth().sets()) {
            List<String> examples = new ArrayList<>();
            SortedMap<Key, List<BigInteger>> rows =
                    served.windows().getOrDefault(truth.name(), Collections.emptySortedMap());
            long[] keys = {0};
            long wrong = compare(
                    truth.name() + " window_metrics", truth.set().measureNames(), rows, truth.rows(), keys, examples);
            long attributionWrong = -1;
            if (truth.attribution() != null) {
                attributionWrong = compare(
                        truth.name() + " attribution_metrics",
                        SetTruth.ATTRIBUTION_COLUMNS,
                        served.attribution().getOrDefault(truth.name(), Collections.emptySortedMap()),
                        truth.attribution(),
                        new long[1],
                        examples);
            }
            out.add(new SetServed(truth.name(), keys[0], wrong, attributionWrong, examples));
        }
        return out;
    }

    /** How many keys of either side differ; {@code keys[0]} gets how many keys there are. */
    private static long compare(
            String what,
            List<String> columns,
            SortedMap<Key, List<BigInteger>> got,
            SortedMap<Key, List<BigInteger>> want,
            long[] keys,
            List<String> examples) {
        TreeSet<Key> all = new TreeSet<>(got.keySet());
        all.addAll(want.keySet());
        keys[0] = all.size();
        long wrong = 0;
        for (Key k : all) {
            List<BigInteger> g = got.get(k);
            List<BigInteger> w = want.get(k);
            if (Objects.equals(g, w)) continue;
            wrong++;
            example(
                    examples,
                    what + " " + describe(k) + ": "
                            + (g == null ? "missing" : values(columns, g)) + ", truth "
                            + (w == null ? "none" : values(columns, w)));
        }
        return wrong;
    }

    // --- helpers ----------------------------------------------------------------------------------------------------

    static List<BigInteger> plus(List<BigInteger> a, List<BigInteger> b) {
        List<BigInteger> out = new ArrayList<>(a.size());
        for (int i = 0; i < a.size(); i++) out.add(a.get(i).add(b.get(i)));
        return out;
    }

    private static String values(List<String> names, List<BigInteger> values) {
        StringBuilder s = new StringBuilder("{");
        for (int i = 0; i < names.size(); i++) {
            if (i > 0) s.append(", ");
            s.append(names.get(i)).append(' ').append(values.get(i));
        }
        return s.append('}').toString();
    }

    static String describe(Key k) {
        return instant(k.windowStart()) + " " + String.join("/", k.dimensions());
    }

    private static String instant(long millis) {
        return Instant.ofEpochMilli(millis).toString();
    }

    private static void example(List<String> examples, String text) {
        if (examples.size() < EXAMPLES) examples.add(text);
    }
}
