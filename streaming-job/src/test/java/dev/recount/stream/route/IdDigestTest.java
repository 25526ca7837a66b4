package dev.recount.stream.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.shaded.guava33.com.google.common.hash.Hashing;
import org.junit.jupiter.api.Test;

class IdDigestTest {
    /** The digest is MurmurHash3 x64 128 of the id's UTF-16LE bytes; checked against an independent implementation. */
    @Test
    void isMurmur3X64With128BitsOverTheUtf16UnitsOfTheId() {
        StringBuilder id = new StringBuilder();
        for (int length = 0; length <= 40; length++) {
            check(id.toString());
            id.append((char) ('a' + length % 26));
        }
        for (String s : List.of(
                "ev-0", "évènement-\uD83D\uDE80", "\u00ff\u0100\uffff", "00000000-0000-0000-0000-000000000000")) {
            check(s);
        }
    }

    @Test
    void distinguishesIdsThatDifferInOneCharacterOrInLength() {
        IdDigest d = new IdDigest();
        Set<String> seen = new HashSet<>();
        for (String s : List.of("", "a", "aa", "a\u0000", "\u0000a", "ab", "ba", "ev-1", "ev-10", "ev-01")) {
            d.of(s);
            assertThat(seen.add(d.hi + ":" + d.lo)).as(s).isTrue();
        }
    }

    private static void check(String id) {
        IdDigest d = new IdDigest().of(id);
        byte[] expected = Hashing.murmur3_128()
                .hashBytes(id.getBytes(StandardCharsets.UTF_16LE))
                .asBytes();
        ByteBuffer b = ByteBuffer.wrap(expected).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(d.hi).as("high word of '%s'", id).isEqualTo(b.getLong());
        assertThat(d.lo).as("low word of '%s'", id).isEqualTo(b.getLong());
    }
}
