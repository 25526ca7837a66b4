package dev.recount.core.fuzz;

import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A small property runner: checks a property on {@code tries} generated cases, each drawn from its own random
 * stream split off one seed. The seed is fixed, so the build is reproducible; {@code -Dfuzz.seed=N} and
 * {@code -Dfuzz.tries=N} explore further (e.g. {@code mvn -pl core test -Dtest=EventValidatorFuzzTest
 * -Dfuzz.tries=200000 -Dfuzz.seed=$RANDOM}). A failure names the seed and the case, and shows the input.
 */
final class Fuzz {
    static final long DEFAULT_SEED = 0x5eed_2026_1129L;

    private Fuzz() {}

    static <T> void check(
            String property,
            int defaultTries,
            Function<SplittableRandom, T> generator,
            Function<T, String> describe,
            Consumer<T> check) {
        long seed = Long.getLong("fuzz.seed", DEFAULT_SEED);
        int tries = Integer.getInteger("fuzz.tries", defaultTries);
        SplittableRandom root = new SplittableRandom(seed);
        for (int i = 0; i < tries; i++) {
            T input = generator.apply(root.split());
            try {
                check.accept(input);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(
                        property + " failed on case " + i + " of seed " + seed + " (-Dfuzz.seed=" + seed + "): "
                                + e.getMessage() + "\n  input: " + describe.apply(input),
                        e);
            }
        }
    }

    /** A value made printable: controls and every non-ASCII character as \\uXXXX, cut at 2,000 characters. */
    static String show(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && b.length() < 2_000; i++) {
            char c = s.charAt(i);
            b.append(c >= 0x20 && c < 0x7F ? String.valueOf(c) : String.format("\\u%04x", (int) c));
        }
        return b.length() < 2_000 ? b.toString() : b + "... (" + s.length() + " chars)";
    }

    /** Bytes made printable: printable ASCII as is, the rest as \\xHH, cut at 2,000 bytes. */
    static String show(byte[] bytes) {
        if (bytes == null) return "null";
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < bytes.length && i < 2_000; i++) {
            int v = bytes[i] & 0xFF;
            b.append(v >= 0x20 && v < 0x7F && v != '\\' ? String.valueOf((char) v) : String.format("\\x%02x", v));
        }
        return bytes.length <= 2_000 ? b.toString() : b + "... (" + bytes.length + " bytes)";
    }
}
