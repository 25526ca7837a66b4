package dev.recount.tools.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.oracle.Key;
import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class TruthCheckTest {
    static final long AT = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
    static final List<String> COLUMNS = List.of("clicks", "spend_micros");

    static SortedMap<Key, List<BigInteger>> rows(Object... keysAndValues) {
        SortedMap<Key, List<BigInteger>> out = new TreeMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            long[] v = (long[]) keysAndValues[i + 1];
            out.put((Key) keysAndValues[i], List.of(BigInteger.valueOf(v[0]), BigInteger.valueOf(v[1])));
        }
        return out;
    }

    @Test
    void equalRowsAreExact() {
        var rows = rows(Key.of(AT, "c1", "s1"), new long[] {1, 500}, Key.of(AT, "c2", "s1"), new long[] {0, 7});
        TruthCheck check = TruthCheck.compare(
                COLUMNS,
                rows,
                rows(Key.of(AT, "c1", "s1"), new long[] {1, 500}, Key.of(AT, "c2", "s1"), new long[] {0, 7}));

        assertThat(check.isExact()).isTrue();
        assertThat(check.verdict()).isEqualTo("yes, every key and value (2 keys)");
    }

    @Test
    void namesEveryKindOfDifference() {
        TruthCheck check = TruthCheck.compare(
                COLUMNS,
                rows(Key.of(AT, "c1", "s1"), new long[] {1, 501}, Key.of(AT, "c3", "s1"), new long[] {1, 1}),
                rows(Key.of(AT, "c1", "s1"), new long[] {1, 500}, Key.of(AT, "c2", "s1"), new long[] {0, 7}));

        assertThat(check.isExact()).isFalse();
        assertThat(check.keys()).isEqualTo(3);
        assertThat(check.differing()).isEqualTo(3);
        assertThat(check.differences())
                .containsExactly(
                        "2026-11-29T10:00:00Z c1/s1: spend_micros 501 instead of 500",
                        "2026-11-29T10:00:00Z c2/s1: missing (truth clicks 0, spend_micros 7)",
                        "2026-11-29T10:00:00Z c3/s1: served but not in the truth (clicks 1, spend_micros 1)");
        assertThat(check.verdict()).startsWith("NO: 3 of 3 keys differ; ");
    }
}
