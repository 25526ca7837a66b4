package dev.recount.stream.lake;

import static dev.recount.stream.Fixtures.W0;
import static dev.recount.stream.Fixtures.click;
import static dev.recount.stream.Fixtures.impression;
import static dev.recount.stream.Fixtures.ms;
import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.lake.LakeLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The ledger's writer: counts per lake hour between checkpoints, each checkpoint's under an id of its own. */
class LakeLedgerWriterTest {
    private final LakeLedgerWriter writer = new LakeLedgerWriter();

    @Test
    void countsEachCheckpointsEventsPerLakeHourUnderANewId() {
        long hour = LakeLayout.hourStart(ms(W0));
        writer.write(click("a", W0, 0), null);
        writer.write(impression("b", W0.plusSeconds(1), 1), null);
        writer.write(click("a", W0, 2), null); // a copy is archived too, so it counts
        writer.write(click("c", W0.minus(Duration.ofHours(2)), 3), null); // a late event, into its own hour
        writer.write(impression("d", W0.plusSeconds(2), 4), null);

        List<LakeLedgerCommittable> first = List.copyOf(writer.prepareCommit());
        assertThat(first).hasSize(1);
        assertThat(first.get(0).rowsByHour()).isEqualTo(Map.of(hour, 4L, hour - 2 * LakeLayout.HOUR_MILLIS, 1L));

        assertThat(writer.prepareCommit())
                .as("nothing since the last checkpoint")
                .isEmpty();

        writer.write(click("e", W0.plusSeconds(3), 5), null);
        List<LakeLedgerCommittable> second = List.copyOf(writer.prepareCommit());
        assertThat(second.get(0).rowsByHour()).isEqualTo(Map.of(hour, 1L));
        assertThat(second.get(0).commitId()).isNotEqualTo(first.get(0).commitId());
    }

    @Test
    void anEventBeforeTheEpochFallsIntoTheHourThatHoldsIt() {
        writer.write(click("old", java.time.Instant.ofEpochMilli(-1), 0), null);
        assertThat(List.copyOf(writer.prepareCommit()).get(0).rowsByHour())
                .isEqualTo(Map.of(-LakeLayout.HOUR_MILLIS, 1L));
    }

    @Test
    void committablesSurviveTheirSerializer() throws Exception {
        TreeMap<Long, Long> rows = new TreeMap<>(Map.of(0L, 3L, LakeLayout.HOUR_MILLIS * 500_000, Long.MAX_VALUE));
        LakeLedgerCommittable c = new LakeLedgerCommittable(java.util.UUID.randomUUID(), rows);
        LakeLedgerCommittable.Serializer serializer = new LakeLedgerCommittable.Serializer();
        assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(c)))
                .isEqualTo(c);
    }
}
