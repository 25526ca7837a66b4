package dev.recount.faults;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Records any producer can send, each of which once stopped or skewed the speed layer, plus neighbours that must
 * pass: ids with NUL (escaped), C1 and DEL characters, lone surrogates; costs above the maximum, at it, beyond
 * 64 bits, negative; two conversions of 5·10^18 micros in one window (once a long overflow that crash-looped the
 * job); ids of 256 and 257 bytes; JSON that is not an object, duplicate keys, a 600 KB value; one event from
 * a producer whose clock runs 50 minutes ahead (valid: judged against its own record timestamp); a record with a
 * 700 KB key and 64 KB of control bytes (its dead letter once exceeded Kafka's 1 MiB limit, and the job failed over
 * on it forever); and an event stamped near 2^63 by its producer (once valid, with a window end that overflowed).
 * With the suite's metric sets, the integer attribute {@code quantity} too: 2^63 - 1 twice in one window (a sum beyond
 * 64 bits), and negative, beyond 64 bits and as a string (schema dead letters).
 */
final class PoisonCorpus {
    /** Event time of the poison events: inside the traffic's range, so they fall in its windows. */
    private final long at;

    private final Instant skewedClock;

    private final long now;

    PoisonCorpus(Instant trafficMiddle, Instant now) {
        this.at = trafficMiddle.toEpochMilli();
        this.skewedClock = now.plusSeconds(50 * 60);
        this.now = now.toEpochMilli();
    }

    List<byte[]> lines() {
        List<String> l = new ArrayList<>();
        l.add(event("p-nul", "conversion", at, "cmp-\\u0000x", "ch-a", 5));
        l.add(event("p-c1", "impression", at, "cmp-poison", "ch-\\u0085", 5));
        l.add(event("p-del", "impression", at, "cmp-poison", "ch-\u007f", 5));
        l.add(event("p-surrogate", "impression", at, "cmp-poison", "ch-a\\ud800", 5));
        l.add(event("p-low-surrogate", "impression", at, "cmp-poison", "ch-a\\udc00x", 5));
        l.add(event("p-big-1", "conversion", at, "cmp-poison", "ch-big", 5_000_000_000_000_000_000L));
        l.add(event("p-big-2", "conversion", at + 1, "cmp-poison", "ch-big", 5_000_000_000_000_000_000L));
        for (int i = 0; i < 3; i++) {
            l.add(event("p-max-" + i, "conversion", at + i, "cmp-poison", "ch-max", 1_000_000_000_000L));
        }
        l.add(event("p-over-max", "conversion", at, "cmp-poison", "ch-max", 1_000_000_000_001L));
        l.add(event("p-negative", "click", at, "cmp-poison", "ch-a", -1));
        l.add("{\"event_id\":\"p-2^63\",\"event_type\":\"click\",\"event_ts\":" + at
                + ",\"campaign_id\":\"cmp-poison\",\"channel_id\":\"ch-a\",\"cost_micros\":9223372036854775808}");
        l.add(withMembers(
                event("p-qty-max-1", "click", at, "cmp-poison", "ch-qty", 1),
                ",\"country\":\"DE\",\"quantity\":" + Long.MAX_VALUE));
        l.add(withMembers(
                event("p-qty-max-2", "click", at, "cmp-poison", "ch-qty", 1),
                ",\"country\":\"DE\",\"quantity\":" + Long.MAX_VALUE));
        l.add(withMembers(event("p-qty-negative", "click", at, "cmp-poison", "ch-qty", 1), ",\"quantity\":-1"));
        l.add(withMembers(
                event("p-qty-beyond", "click", at, "cmp-poison", "ch-qty", 1), ",\"quantity\":9223372036854775808"));
        l.add(withMembers(event("p-qty-string", "click", at, "cmp-poison", "ch-qty", 1), ",\"quantity\":\"3\""));
        l.add(event("i".repeat(256), "impression", at, "cmp-poison", "ch-long", 1));
        l.add(event("j".repeat(257), "impression", at, "cmp-poison", "ch-long", 1));
        l.add("[1,2,3]");
        l.add("null");
        l.add("42");
        l.add("{\"event_id\":\"p-dup\",\"event_id\":\"p-dup2\",\"event_type\":\"click\",\"event_ts\":" + at
                + ",\"campaign_id\":\"cmp-poison\",\"channel_id\":\"ch-a\",\"cost_micros\":1}");
        l.add("{\"garbage\":\"" + "x".repeat(600_000) + "\"}");
        List<byte[]> bytes = new ArrayList<>();
        for (String s : l) bytes.add(s.getBytes(StandardCharsets.UTF_8));
        return bytes;
    }

    /** A record sent as it is, with its own key and record timestamp. */
    record Direct(byte[] key, byte[] value, long recordTs) {}

    /**
     * Records sent with their own key and record timestamp: the skewed producer's event, timed by its own clock; the
     * huge key; the event stamped near 2^63.
     */
    List<Direct> direct() {
        byte[] campaign = "cmp-poison".getBytes(StandardCharsets.UTF_8);
        List<Direct> d = new ArrayList<>();
        d.add(new Direct(
                campaign,
                event("p-skewed-clock", "click", skewedClock.toEpochMilli(), "cmp-poison", "ch-skew", 7)
                        .getBytes(StandardCharsets.UTF_8),
                skewedClock.toEpochMilli()));
        byte[] hugeKey = new byte[700_000];
        java.util.Arrays.fill(hugeKey, (byte) 'k');
        byte[] controls = new byte[65_536];
        java.util.Arrays.fill(controls, (byte) 1);
        d.add(new Direct(hugeKey, controls, now));
        long farTs = Long.MAX_VALUE - 60_000;
        d.add(new Direct(
                campaign,
                event("p-far-future", "click", farTs - 1_000, "cmp-poison", "ch-far", 7)
                        .getBytes(StandardCharsets.UTF_8),
                farTs));
        return d;
    }

    /** {@code event} with {@code members} (",\"a\":1") added inside its object. */
    private static String withMembers(String event, String members) {
        return event.substring(0, event.length() - 1) + members + "}";
    }

    private static String event(String id, String type, long ts, String campaign, String channel, long cost) {
        return "{\"event_id\":\"" + id + "\",\"event_type\":\"" + type + "\",\"event_ts\":" + ts + ",\"campaign_id\":\""
                + campaign + "\",\"channel_id\":\"" + channel + "\",\"cost_micros\":" + cost + "}";
    }
}
