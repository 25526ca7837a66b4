package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.ReconciliationDiffsTable.Row;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import dev.recount.reconcile.testutils.DefaultSet;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LargestDiffsTest {
    static final long W = 1_795_000_000_000L;

    static Row mismatch(String campaign, long window, long streamSpend, long batchSpend, long clicksOff) {
        return new Row(
                WindowKey.of(W + window * 60_000, campaign, "web"),
                W + window * 60_000 + 60_000,
                Status.MISMATCH,
                false,
                1,
                MeasureValues.of(1, 1, 0, streamSpend, 2),
                MeasureValues.of(1, 1 + clicksOff, 0, batchSpend, 2 + clicksOff));
    }

    @Test
    void keepsTheLargestBySpendThenOtherMetricsThenKey() {
        LargestDiffs largest = new LargestDiffs(DefaultSet.SET, 3);
        largest.accept(mismatch("a", 0, 100, 90, 0)); // spend 10
        largest.accept(mismatch("b", 0, 100, 150, 0)); // spend 50
        largest.accept(mismatch("c", 0, 100, 100, 7)); // spend 0, clicks and events 7 each
        largest.accept(mismatch("d", 0, 100, 110, 1)); // spend 10, others 2: before "a"
        largest.accept(mismatch("e", 1, 100, 110, 1)); // as "d", a later window: after it
        assertThat(largest.of(Status.MISMATCH))
                .extracting(r -> r.key().dimension(0))
                .containsExactly("b", "d", "e");
        assertThat(largest.of(Status.MISSING_IN_STREAM)).isEmpty();
    }

    @Test
    void aSetsSumsComeBeforeItsCountsWhateverTheirNames() {
        // campaign_slot: impressions, clicks, spend_micros, events; its key is (campaign, slot).
        dev.recount.core.sets.MetricSet slot = dev.recount.reconcile.testutils.ThreeSets.SLOT;
        LargestDiffs largest = new LargestDiffs(slot, 2);
        Row manyClicks = new Row(
                WindowKey.of(W, "a", "top"),
                W + 300_000,
                Status.MISMATCH,
                false,
                1,
                MeasureValues.of(0, 0, 10, 0),
                MeasureValues.of(0, 90, 10, 90));
        Row someSpend = new Row(
                WindowKey.of(W, "b", "top"),
                W + 300_000,
                Status.MISMATCH,
                false,
                1,
                MeasureValues.of(0, 0, 10, 0),
                MeasureValues.of(0, 0, 11, 0));
        Row sameButLater = new Row(
                WindowKey.of(W, "b", "zz"),
                W + 300_000,
                Status.MISMATCH,
                false,
                1,
                MeasureValues.of(0, 0, 10, 0),
                MeasureValues.of(0, 0, 11, 0));
        largest.accept(manyClicks);
        largest.accept(sameButLater);
        largest.accept(someSpend);
        assertThat(largest.of(Status.MISMATCH)).containsExactly(someSpend, sameButLater);
    }

    @Test
    void sameAsSortingEverythingAndSpendBeyondALongCounts() {
        Random random = new Random(42);
        List<Row> all = new ArrayList<>();
        LargestDiffs largest = new LargestDiffs(DefaultSet.SET, 25);
        for (int i = 0; i < 2_000; i++) {
            Row r = mismatch(
                    "c" + random.nextInt(50),
                    random.nextInt(100),
                    random.nextInt(1_000),
                    random.nextInt(1_000),
                    random.nextInt(3));
            all.add(r);
            largest.accept(r);
        }
        BigInteger huge = BigInteger.TWO.pow(70);
        Row big = new Row(
                WindowKey.of(W, "huge", "web"),
                W + 60_000,
                Status.MISMATCH,
                false,
                1,
                new MeasureValues(BigInteger.ZERO, BigInteger.ZERO, BigInteger.ZERO, huge, BigInteger.ONE),
                MeasureValues.of(0, 0, 0, 0, 1));
        all.add(big);
        largest.accept(big);
        all.sort(largest.largestFirst);
        assertThat(largest.of(Status.MISMATCH)).containsExactlyElementsOf(all.subList(0, 25));
        assertThat(largest.of(Status.MISMATCH).get(0)).isEqualTo(big);
    }
}
