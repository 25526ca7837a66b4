package dev.recount.core.fuzz;

import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.fuzz.Json.Arr;
import dev.recount.core.fuzz.Json.Member;
import dev.recount.core.fuzz.Json.Null;
import dev.recount.core.fuzz.Json.Num;
import dev.recount.core.fuzz.Json.Obj;
import dev.recount.core.fuzz.Json.Spelling;
import dev.recount.core.fuzz.Json.Str;
import java.math.BigInteger;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * CONTRACT §1 written a second time, independently of {@code EventValidator} (none of its code is called): what the
 * verdict on a generated record must be, and whether an accepted event obeys every rule.
 */
final class ContractOracle {
    private static final Pattern INTEGER = Pattern.compile("-?(0|[1-9][0-9]*)");
    private static final BigInteger LONG_MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);
    private static final Set<String> TYPES = Set.of(HostileJson.TYPES);
    private static final int MAX_ID_BYTES = 256;

    private ContractOracle() {}

    /** The reason a record must be rejected with, or empty if it must be accepted. */
    static Optional<InvalidReason> expectedVerdict(HostileJson.Case c) {
        if (!isJson(c.document())) return Optional.of(InvalidReason.MALFORMED);
        Map<String, Json> f = fields(c.document());
        boolean schemaOk = isId(f.get("event_id"))
                && f.get("event_type") instanceof Str type
                && TYPES.contains(type.value())
                && isId(f.get("campaign_id"))
                && isId(f.get("channel_id"))
                && (f.get("request_id") == null || f.get("request_id") instanceof Null || isId(f.get("request_id")))
                && longOf(f.get("event_ts")).isPresent()
                && longOf(f.get("cost_micros"))
                        .filter(cost -> cost >= 0 && cost <= c.settings().maxCostMicros())
                        .isPresent();
        if (!schemaOk) return Optional.of(InvalidReason.SCHEMA);
        return inTimeRange(longOf(f.get("event_ts")).get(), c.recordTs(), c.settings())
                ? Optional.empty()
                : Optional.of(InvalidReason.TIMESTAMP);
    }

    /** The event a record that must be accepted describes, field by field as generated. */
    static AdEvent expectedEvent(HostileJson.Case c, String topic, int partition, long offset) {
        Map<String, Json> f = fields(c.document());
        AdEvent e = new AdEvent();
        e.eventId = ((Str) f.get("event_id")).value();
        e.eventType = dev.recount.core.event.EventType.fromWire(((Str) f.get("event_type")).value())
                .orElseThrow();
        e.eventTs = longOf(f.get("event_ts")).orElseThrow();
        e.campaignId = ((Str) f.get("campaign_id")).value();
        e.channelId = ((Str) f.get("channel_id")).value();
        e.costMicros = longOf(f.get("cost_micros")).orElseThrow();
        e.requestId = f.get("request_id") instanceof Str s ? s.value() : null;
        e.topic = topic;
        e.partition = partition;
        e.offset = offset;
        e.recordTs = c.recordTs();
        return e;
    }

    /** The contract's fields; every other member of an accepted record is kept for the lake. */
    private static final Set<String> CONTRACT_FIELDS =
            Set.of("event_id", "event_type", "event_ts", "campaign_id", "channel_id", "cost_micros", "request_id");

    /**
     * The members of an accepted record beyond the contract's, as a JSON object written by this package's own writer
     * (null when there are none): what the event's attributesJson must mean, compared as parsed values.
     */
    static byte[] expectedAttributes(HostileJson.Case c) {
        List<Member> extra = new ArrayList<>();
        for (Member m : c.document().members()) {
            if (!CONTRACT_FIELDS.contains(m.key().value())) extra.add(m);
        }
        return extra.isEmpty() ? null : Json.write(new Obj(extra), "");
    }

    /** Every contract rule an accepted event breaks (empty when it obeys them all). */
    static List<String> violations(AdEvent e, long recordTs, ValidationSettings settings) {
        List<String> broken = new ArrayList<>();
        idViolation("event_id", e.eventId, false, broken);
        idViolation("campaign_id", e.campaignId, false, broken);
        idViolation("channel_id", e.channelId, false, broken);
        idViolation("request_id", e.requestId, true, broken);
        if (e.eventType == null) broken.add("no event_type");
        if (e.costMicros < 0 || e.costMicros > settings.maxCostMicros())
            broken.add("cost_micros " + e.costMicros + " out of range");
        if (!inTimeRange(e.eventTs, recordTs, settings)) broken.add("event_ts " + e.eventTs + " out of range");
        if (e.recordTs != recordTs) broken.add("record_ts " + e.recordTs + " is not the record's " + recordTs);
        return broken;
    }

    /** The id rule on a string: not blank, no control character, well-formed UTF-16, at most 256 UTF-8 bytes. */
    static boolean isValidId(String s) {
        if (s == null || s.isBlank()) return false;
        if (s.codePoints().anyMatch(Character::isISOControl)) return false;
        try {
            // A strict encoder refuses unpaired surrogates (String.getBytes would replace them with '?').
            return StandardCharsets.UTF_8
                            .newEncoder()
                            .encode(CharBuffer.wrap(s))
                            .remaining()
                    <= MAX_ID_BYTES;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    private static void idViolation(String field, String id, boolean optional, List<String> broken) {
        if (id == null && optional) return;
        if (!isValidId(id)) broken.add(field + " breaks the id rule: " + Fuzz.show(id));
    }

    private static boolean isId(Json value) {
        return value instanceof Str s && isValidId(s.value());
    }

    private static Optional<Long> longOf(Json value) {
        if (!(value instanceof Num n) || !INTEGER.matcher(n.literal()).matches()) return Optional.empty();
        BigInteger v = new BigInteger(n.literal());
        return v.compareTo(LONG_MIN) < 0 || v.compareTo(LONG_MAX) > 0 ? Optional.empty() : Optional.of(v.longValue());
    }

    /** The years every store holds: from 0001-01-01 to before 9999-01-01 UTC (contract §1), spelled apart here. */
    private static final long FIRST_MS = -62_135_596_800_000L;

    private static final long END_MS = 253_370_764_800_000L;

    /**
     * event_ts within [record_ts - max-past, record_ts + max-future], computed without overflow, and within the
     * years 0001 to 9998.
     */
    private static boolean inTimeRange(long eventTs, long recordTs, ValidationSettings settings) {
        if (eventTs < FIRST_MS || eventTs >= END_MS) return false;
        BigInteger ts = BigInteger.valueOf(eventTs);
        BigInteger record = BigInteger.valueOf(recordTs);
        return ts.compareTo(record.subtract(
                                BigInteger.valueOf(settings.maxPast().toMillis())))
                        >= 0
                && ts.compareTo(record.add(
                                BigInteger.valueOf(settings.maxFuture().toMillis())))
                        <= 0;
    }

    /** Whether the bytes are JSON a strict parser accepts: no raw C0, valid UTF-8, no duplicate keys in any object. */
    private static boolean isJson(Json value) {
        if (value instanceof Str s) {
            if (s.spelling() == Spelling.RAW_C0 && s.value().chars().anyMatch(ch -> ch < 0x20)) return false;
            return s.spelling() != Spelling.RAW_SURROGATES || !hasUnpairedSurrogate(s.value());
        }
        if (value instanceof Arr a) return a.items().stream().allMatch(ContractOracle::isJson);
        if (value instanceof Obj o) {
            Set<String> keys = new HashSet<>();
            for (Member m : o.members()) {
                if (!keys.add(m.key().value()) || !isJson(m.key()) || !isJson(m.value())) return false;
            }
        }
        return true;
    }

    static boolean hasUnpairedSurrogate(String s) {
        return s.codePoints().anyMatch(cp -> cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE);
    }

    private static Map<String, Json> fields(Obj document) {
        Map<String, Json> f = new HashMap<>();
        for (Member m : document.members()) f.put(m.key().value(), m.value());
        return f;
    }
}
