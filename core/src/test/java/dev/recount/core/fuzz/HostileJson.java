package dev.recount.core.fuzz;

import dev.recount.core.config.ValidationSettings;
import dev.recount.core.fuzz.Json.Arr;
import dev.recount.core.fuzz.Json.Bool;
import dev.recount.core.fuzz.Json.Member;
import dev.recount.core.fuzz.Json.Null;
import dev.recount.core.fuzz.Json.Num;
import dev.recount.core.fuzz.Json.Obj;
import dev.recount.core.fuzz.Json.Spelling;
import dev.recount.core.fuzz.Json.Str;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Generators of input records that mix CONTRACT §1's fields with hostile values: controls (raw and escaped), lone
 * surrogates, astral characters, numbers beyond 64 bits, {@code 1e400}, numbers as strings, huge strings, nested
 * values, duplicate and extra keys. Every generator draws from the one {@link SplittableRandom} it is given, so a
 * seed reproduces a case exactly.
 */
final class HostileJson {
    static final String[] FIELDS = {"event_id", "event_type", "event_ts", "campaign_id", "channel_id", "cost_micros"};
    static final String[] TYPES = {"impression", "click", "conversion"};
    static final Duration MAX_PAST = Duration.ofDays(7);
    static final Duration MAX_FUTURE = Duration.ofMinutes(5);
    private static final long YEAR_2000 = 946_684_800_000L;
    private static final long YEAR_2100 = 4_102_444_800_000L;
    /** Characters beyond ASCII that are fine in ids: they must survive every sink unchanged. */
    private static final String[] WELL_FORMED = {
        "\u00e9",
        "\u00df",
        "\u4e2d",
        "\u20ac",
        "\uFFFD",
        "\uFEFF",
        "\uFFFF",
        "?",
        "\u00A0",
        "\u0301",
        "\u200D",
        "\u05D0",
        "\uD83D\uDE80",
        "\uD83D\uDC69\u200D\uD83D\uDCBB",
        "\uDBFF\uDFFF"
    };

    private static final String[] WHITESPACE = {" ", "\u3000", "\u2028", "\t"};
    private static final String[] NUMBER_EDGES = {
        "0",
        "-0",
        "-1",
        "1e400",
        "-1e400",
        "1e-400",
        "2.5",
        "1E3",
        "0.0",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1000000000000",
        "1000000000001",
        "100000000000000000000000000000000000000000000"
    };
    private static final String[] SPACES = {"", " ", "\n", "\t ", "\r\n  "};

    /** One generated record: the document, how it is laid out, and what it is judged against. */
    record Case(Obj document, String space, long recordTs, ValidationSettings settings) {
        byte[] bytes() {
            return Json.write(document, space);
        }
    }

    private final SplittableRandom r;
    /** Valid-only mode: every string spelled legally, no duplicate keys anywhere. */
    private final boolean legal;
    /**
     * Percent chance that a field of the current record draws from its hostile values. Half the records are rough
     * (every field may be hostile), half gentle (one field at most, usually), so every verdict is reached often.
     */
    private int hostility;

    private HostileJson(SplittableRandom r, boolean legal) {
        this.r = r;
        this.legal = legal;
    }

    /** A record mixing the contract's fields with hostile values; any verdict is possible. */
    static Case hostileRecord(SplittableRandom r) {
        return new HostileJson(r, false).record();
    }

    /** A record that satisfies every contract rule, spelled in any legal way, with any legal extra fields. */
    static Case validRecord(SplittableRandom r) {
        return new HostileJson(r, true).record();
    }

    /** Arbitrary bytes: random, JSON-like token soup, or a hostile record's bytes with a few mutations. */
    static byte[] anyBytes(SplittableRandom r) {
        int k = r.nextInt(10);
        if (k < 3) {
            byte[] b = new byte[r.nextInt(200)];
            r.nextBytes(b);
            return b;
        }
        if (k < 5) return tokenSoup(r);
        return mutate(r, hostileRecord(r).bytes());
    }

    // --- records ---------------------------------------------------------------------------------------------------

    private Case record() {
        long recordTs = legal || r.nextInt(10) > 0
                ? r.nextLong(YEAR_2000, YEAR_2100)
                : pick(new Long[] {Long.MIN_VALUE, Long.MAX_VALUE, 0L, -1L});
        long maxCost = pickWeighted(new long[] {0, 5_000, 1_000_000_000_000L, Long.MAX_VALUE}, new int[] {1, 2, 6, 1});
        if (legal && maxCost == 0) maxCost = 5_000;
        ValidationSettings settings = new ValidationSettings(MAX_PAST, MAX_FUTURE, maxCost);
        hostility = legal ? 0 : r.nextBoolean() ? 100 : 4;

        List<Member> members = new ArrayList<>();
        for (String field : FIELDS) {
            if (hostile() && r.nextInt(100) < 7) continue; // missing
            members.add(new Member(
                    key(field),
                    switch (field) {
                        case "event_type" -> typeValue();
                        case "event_ts" -> tsValue(recordTs);
                        case "cost_micros" -> costValue(maxCost);
                        default -> idValue();
                    }));
        }
        int requestId = r.nextInt(10);
        if (requestId >= 4) members.add(new Member(key("request_id"), requestId == 4 ? new Null() : idValue()));
        Set<String> used = new HashSet<>();
        members.forEach(m -> used.add(m.key().value()));
        for (int i = r.nextInt(4); i > 0; i--) {
            Str key = r.nextInt(10) < 7
                    ? key(pick(new String[] {
                        "extra", "ts", "eventId", "EVENT_ID", "event_id ", "campaign", "meta", "request_id\u0000"
                    }))
                    : new Str(shortHostileString(), spelling());
            if (legal && !used.add(key.value())) continue;
            members.add(new Member(key, anyValue(0)));
        }
        if (!legal && r.nextInt(100) < 5 && !members.isEmpty()) { // a duplicate key, maybe spelled differently
            Member twin = members.get(r.nextInt(members.size()));
            members.add(
                    new Member(new Str(twin.key().value(), spelling()), r.nextBoolean() ? twin.value() : anyValue(0)));
        }
        shuffle(members);
        return new Case(new Obj(members), pick(SPACES), recordTs, settings);
    }

    private boolean hostile() {
        return r.nextInt(100) < hostility;
    }

    private Str key(String name) {
        return new Str(name, spelling());
    }

    private Spelling spelling() {
        int k = r.nextInt(100);
        if (k < 55 || legal && k < 75) return Spelling.PLAIN;
        if (k < 90 || legal) return Spelling.ESCAPED;
        return k < 95 ? Spelling.RAW_C0 : Spelling.RAW_SURROGATES;
    }

    // --- field values ----------------------------------------------------------------------------------------------

    private Json idValue() {
        int k = r.nextInt(100);
        if (!hostile() || k < 60) return new Str(validId(), spelling());
        if (k < 85) return new Str(hostileString(), spelling());
        return anyValue(0);
    }

    private Json typeValue() {
        int k = r.nextInt(100);
        if (!hostile() || k < 75) return new Str(pick(TYPES), spelling());
        if (k < 90) {
            return new Str(
                    pick(new String[] {
                        "Click",
                        "IMPRESSION",
                        " click",
                        "",
                        "clicks",
                        "view",
                        "click\u0000",
                        "impression\uD800",
                        "conversion\u0085",
                        "c\u200Dlick"
                    }),
                    spelling());
        }
        return anyValue(0);
    }

    private Json tsValue(long recordTs) {
        BigInteger ts = BigInteger.valueOf(recordTs);
        BigInteger past = BigInteger.valueOf(MAX_PAST.toMillis());
        BigInteger future = BigInteger.valueOf(MAX_FUTURE.toMillis());
        BigInteger earliest = clamp(ts.subtract(past));
        BigInteger latest = clamp(ts.add(future));
        long inRange = r.nextLong(latest.subtract(earliest).longValue() + 1);
        if (legal) return new Num(earliest.add(BigInteger.valueOf(inRange)).toString());
        int k = r.nextInt(100);
        if (k < 55) return new Num(earliest.add(BigInteger.valueOf(inRange)).toString());
        if (k < 75) {
            return new Num(pick(new BigInteger[] {
                        earliest, latest, earliest.subtract(BigInteger.ONE), latest.add(BigInteger.ONE)
                    })
                    .toString());
        }
        if (k < 85)
            return new Num(ts.add(BigInteger.valueOf(r.nextLong(-3 * past.longValue(), 3 * past.longValue())))
                    .toString());
        if (!hostile()) return new Num(earliest.add(BigInteger.valueOf(inRange)).toString());
        if (k < 90) return new Num(pick(NUMBER_EDGES));
        if (k < 95) return new Str(ts.toString(), spelling()); // a number written as a string
        return anyValue(0);
    }

    private Json costValue(long maxCost) {
        int k = r.nextInt(100);
        if (!hostile() || k < 65)
            return new Num(
                    Long.toString(maxCost == Long.MAX_VALUE ? r.nextLong(Long.MAX_VALUE) : r.nextLong(maxCost + 1)));
        BigInteger max = BigInteger.valueOf(maxCost);
        if (k < 80)
            return new Num(
                    pick(new BigInteger[] {BigInteger.ZERO, max, max.add(BigInteger.ONE), BigInteger.ONE.negate()})
                            .toString());
        if (k < 88) return new Num(pick(NUMBER_EDGES));
        if (k < 93) return new Str(Long.toString(r.nextLong(5_000)), spelling());
        return anyValue(0);
    }

    /** Any JSON value; containers nest at most three deep. */
    private Json anyValue(int depth) {
        int k = r.nextInt(depth < 3 ? 100 : 70);
        if (k < 25) return new Str(r.nextInt(20) == 0 ? hugeString() : shortHostileString(), spelling());
        if (k < 45) return new Num(numberLiteral());
        if (k < 55) return new Bool(r.nextBoolean());
        if (k < 70) return new Null();
        if (k < 85) {
            List<Json> items = new ArrayList<>();
            for (int i = r.nextInt(4); i > 0; i--) items.add(anyValue(depth + 1));
            return new Arr(items);
        }
        List<Member> members = new ArrayList<>();
        Set<String> used = new HashSet<>();
        for (int i = r.nextInt(4); i > 0; i--) {
            Str key = new Str(pick(FIELDS), spelling());
            if (legal && !used.add(key.value())) continue;
            members.add(new Member(key, anyValue(depth + 1)));
        }
        return new Json.Obj(members);
    }

    private String numberLiteral() {
        int k = r.nextInt(10);
        if (k < 3) return Long.toString(r.nextLong());
        if (k < 6) return Integer.toString(r.nextInt(-1000, 1000));
        if (k < 8) {
            BigInteger big = new BigInteger(r.nextInt(1, 140), new java.util.Random(r.nextLong()));
            return (r.nextBoolean() ? big : big.negate()).toString();
        }
        return pick(NUMBER_EDGES);
    }

    // --- strings ---------------------------------------------------------------------------------------------------

    /** An id that satisfies the id rule: printable ASCII and well-formed Unicode, 1 to 256 UTF-8 bytes. */
    private String validId() {
        int k = r.nextInt(100);
        if (k < 60) return pick(new String[] {"ev", "cmp", "ch", "imp"}) + "-" + r.nextInt(1_000_000);
        if (k < 90) {
            StringBuilder b =
                    new StringBuilder().append((char) r.nextInt('a', 'z' + 1)).append(asciiWord());
            for (int i = r.nextInt(6); i > 0; i--) b.append(r.nextBoolean() ? asciiWord() : pick(WELL_FORMED));
            return b.toString();
        }
        return pick(new String[] {
            "x".repeat(256),
            "\u00e9".repeat(128),
            "\u4e2d".repeat(85) + "x",
            "\uD83D\uDE80".repeat(64),
            "?",
            "\uFFFD",
            "a\uD83D\uDE80b"
        });
    }

    /** Anything: well-formed or not; usually short, sometimes huge (ids over 256 bytes, big ignored values). */
    private String hostileString() {
        return r.nextInt(20) == 0 ? hugeString() : shortHostileString();
    }

    private String shortHostileString() {
        StringBuilder b = new StringBuilder();
        for (int i = r.nextInt(11); i > 0; i--) b.append(piece());
        return b.toString();
    }

    private String hugeString() {
        String piece = piece();
        return piece.repeat(Math.max(1, r.nextInt(100, 20_000) / piece.length()));
    }

    private String piece() {
        int k = r.nextInt(100);
        if (k < 40) return asciiWord();
        if (k < 47) return String.valueOf((char) r.nextInt(0x20)); // C0
        if (k < 49) return "\u007F"; // DEL
        if (k < 54) return String.valueOf((char) r.nextInt(0x80, 0xA0)); // C1
        if (k < 60)
            return String.valueOf((char) r.nextInt(0xD800, 0xDC00)); // high surrogate, alone unless a low follows
        if (k < 66) return String.valueOf((char) r.nextInt(0xDC00, 0xE000)); // low surrogate
        if (k < 76) return Character.toString(r.nextInt(0x10000, 0x110000)); // astral, a well-formed pair
        if (k < 92) return pick(WELL_FORMED);
        return pick(WHITESPACE);
    }

    private String asciiWord() {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/?'\"\\ {}[],";
        StringBuilder b = new StringBuilder();
        for (int i = r.nextInt(1, 9); i > 0; i--) b.append(alphabet.charAt(r.nextInt(alphabet.length())));
        return b.toString();
    }

    // --- bytes -----------------------------------------------------------------------------------------------------

    private static final byte[][] TOKENS = {
        ascii("{"),
        ascii("}"),
        ascii("["),
        ascii("]"),
        ascii("\""),
        ascii(":"),
        ascii(","),
        ascii("\\"),
        ascii("\\u0000"),
        ascii("\\ud800"),
        ascii("\\udc00"),
        ascii("\\u"),
        ascii("1e400"),
        ascii("-"),
        ascii("9223372036854775808"),
        ascii("null"),
        ascii("true"),
        ascii("\"event_id\""),
        ascii("\"cost_micros\""),
        {0},
        {0x7F},
        {(byte) 0xC2, (byte) 0x85},
        {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
        {(byte) 0xF0, (byte) 0x9F, (byte) 0x9A, (byte) 0x80},
        {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF},
        {(byte) 0xFF},
        {(byte) 0xC0, (byte) 0xAF},
        ascii(" "),
        ascii("\n")
    };

    private static byte[] tokenSoup(SplittableRandom r) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = r.nextInt(40); i > 0; i--) out.writeBytes(TOKENS[r.nextInt(TOKENS.length)]);
        return out.toByteArray();
    }

    /** One to four edits: overwrite a byte, insert a token, delete a run, truncate, or repeat a slice. */
    private static byte[] mutate(SplittableRandom r, byte[] value) {
        byte[] b = value;
        for (int edits = r.nextInt(1, 5); edits > 0; edits--) {
            int at = b.length == 0 ? 0 : r.nextInt(b.length);
            switch (r.nextInt(5)) {
                case 0 -> {
                    if (b.length > 0) b[at] = (byte) r.nextInt(256);
                }
                case 1 -> b = splice(b, at, 0, TOKENS[r.nextInt(TOKENS.length)]);
                case 2 -> b = splice(b, at, Math.min(b.length - at, r.nextInt(1, 8)), new byte[0]);
                case 3 -> b = java.util.Arrays.copyOf(b, at);
                default ->
                    b = splice(
                            b, at, 0, java.util.Arrays.copyOfRange(b, at, Math.min(b.length, at + r.nextInt(1, 30))));
            }
        }
        return b;
    }

    private static byte[] splice(byte[] b, int at, int remove, byte[] insert) {
        byte[] out = new byte[b.length - remove + insert.length];
        System.arraycopy(b, 0, out, 0, at);
        System.arraycopy(insert, 0, out, at, insert.length);
        System.arraycopy(b, at + remove, out, at + insert.length, b.length - at - remove);
        return out;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    // --- helpers ---------------------------------------------------------------------------------------------------

    private static BigInteger clamp(BigInteger v) {
        return v.max(BigInteger.valueOf(Long.MIN_VALUE)).min(BigInteger.valueOf(Long.MAX_VALUE));
    }

    private <T> T pick(T[] options) {
        return options[r.nextInt(options.length)];
    }

    private long pickWeighted(long[] options, int[] weights) {
        int total = java.util.Arrays.stream(weights).sum();
        int k = r.nextInt(total);
        for (int i = 0; i < options.length; i++) {
            k -= weights[i];
            if (k < 0) return options[i];
        }
        throw new AssertionError("weights");
    }

    private <T> void shuffle(List<T> list) {
        for (int i = list.size() - 1; i > 0; i--) java.util.Collections.swap(list, i, r.nextInt(i + 1));
    }
}
