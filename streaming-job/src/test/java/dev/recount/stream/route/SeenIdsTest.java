package dev.recount.stream.route;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class SeenIdsTest {
    private final IdDigest digest = new IdDigest();

    @Test
    void anIdIsNewOnceAndACopyAfterwards() {
        SeenIds ids = new SeenIds();
        assertThat(ids.add(digest.of("a"), 100)).isEqualTo(SeenIds.ADDED_NEW_DUE_TIME);
        assertThat(ids.add(digest.of("b"), 100)).isEqualTo(SeenIds.ADDED);
        assertThat(ids.add(digest.of("a"), 200))
                .as("the id is the key, whatever its time")
                .isEqualTo(SeenIds.COPY);
        assertThat(ids.size()).isEqualTo(2);
    }

    @Test
    void forgetsExactlyWhatIsDueAndReusesTheSlots() {
        SeenIds ids = new SeenIds();
        for (int i = 0; i < 10_000; i++) ids.add(digest.of("id-" + i), i % 2 == 0 ? 100 : 200);
        assertThat(ids.forgetUpTo(99)).isZero();
        assertThat(ids.forgetUpTo(100)).isEqualTo(5_000);
        assertThat(ids.size()).isEqualTo(5_000);
        for (int i = 0; i < 10_000; i++) {
            assertThat(ids.add(digest.of("id-" + i), 300))
                    .as("id-%d", i)
                    .isEqualTo(i % 2 == 0 ? (i == 0 ? SeenIds.ADDED_NEW_DUE_TIME : SeenIds.ADDED) : SeenIds.COPY);
        }
        assertThat(ids.forgetUpTo(Long.MAX_VALUE)).isEqualTo(10_000);
        assertThat(ids.isEmpty()).isTrue();
        assertThat(ids.dueTimes()).isEmpty();
    }

    @Test
    void aCopyIsIndependentAndTheSerializerRoundTrips() throws Exception {
        SeenIds ids = new SeenIds();
        for (int i = 0; i < 1_000; i++) ids.add(digest.of("id-" + i), 1_000 + i % 7);
        SeenIds copy = SeenIds.Serializer.INSTANCE.copy(ids);
        ids.forgetUpTo(1_003);
        assertThat(copy.size()).isEqualTo(1_000);
        assertThat(copy.add(digest.of("id-5"), 1)).isEqualTo(SeenIds.COPY);

        DataOutputSerializer out = new DataOutputSerializer(64);
        SeenIds.Serializer.INSTANCE.serialize(copy, out);
        assertThat(out.length()).as("24 bytes per id and a count").isEqualTo(4 + 24 * 1_000);
        SeenIds read = SeenIds.Serializer.INSTANCE.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
        assertThat(read).isEqualTo(copy);
        assertThat(read.dueTimes()).containsExactly(1_000L, 1_001L, 1_002L, 1_003L, 1_004L, 1_005L, 1_006L);
        assertThat(read.forgetUpTo(1_006)).isEqualTo(1_000);
    }

    /**
     * Against a plain map: ids added over many forget times, forgotten in steps, slots reused and the table grown
     * and shrunk many times; the due index must list every live id once, in time order, after every rebuild.
     */
    @Test
    void agreesWithAMapThroughGrowingShrinkingAndReuse() {
        java.util.Random random = new java.util.Random(20261130L);
        java.util.TreeMap<String, Long> model = new java.util.TreeMap<>();
        SeenIds ids = new SeenIds();
        long now = 0;
        for (int round = 0; round < 200; round++) {
            int adds = random.nextInt(round % 20 == 0 ? 5_000 : 300);
            for (int k = 0; k < adds; k++) {
                String id = "id-" + random.nextInt(40_000);
                // Mostly the next few steps; sometimes far ahead, as a partition read ahead of the others is.
                long forgetAt = now + 10 + random.nextInt(random.nextInt(4) == 0 ? 300 : 8) * 10;
                int added = ids.add(digest.of(id), forgetAt);
                assertThat(added == SeenIds.COPY).as(id).isEqualTo(model.containsKey(id));
                model.putIfAbsent(id, forgetAt);
            }
            now += 10 + random.nextInt(30);
            long due = now;
            int expected = (int) model.values().stream().filter(t -> t <= due).count();
            assertThat(ids.forgetUpTo(now)).as("round %d", round).isEqualTo(expected);
            model.values().removeIf(t -> t <= due);
            assertThat(ids.size()).isEqualTo(model.size());
            assertThat(ids.dueTimes()).isEqualTo(new java.util.ArrayList<>(new java.util.TreeSet<>(model.values())));
            assertThat(ids.firstDueTime())
                    .isEqualTo(model.values().stream().min(Long::compare).orElse(Long.MAX_VALUE));
        }
        assertThat(ids.forgetUpTo(Long.MAX_VALUE)).isEqualTo(model.size());
        assertThat(ids.isEmpty()).isTrue();
    }
}
