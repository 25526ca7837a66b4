package dev.recount.reconcile.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.tables.ReconciliationDiffsTable.Row;
import dev.recount.db.tables.ReconciliationDiffsTable.Status;
import dev.recount.reconcile.testutils.DefaultSet;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LargestRatioDiffsTest {
    static final long W = 1_795_000_000_000L;
    static final MetricSet SET = DefaultSet.SET;
    static final DerivedRatio CTR = SET.ratios().get(0);

    static Row row(String campaign, Status status, MeasureValues stream, MeasureValues batch) {
        return new Row(
                WindowKey.of(W, campaign, "web"), W + 60_000, status, false, stream == null ? null : 1, stream, batch);
    }

    static MeasureValues ctr(long clicks, long impressions) {
        return MeasureValues.of(impressions, clicks, 0, 0, impressions + clicks);
    }

    @Test
    void keepsMismatchesWithACtrOnBothSidesByTheSizeOfTheChange() {
        LargestRatioDiffs largest = new LargestRatioDiffs(SET, CTR, 2);
        largest.accept(row("small", Status.MISMATCH, ctr(1, 10), ctr(1, 11))); // 0.1 -> 0.0909...
        largest.accept(row("big-down", Status.MISMATCH, ctr(5, 10), ctr(1, 10))); // 0.5 -> 0.1
        largest.accept(row("big-up", Status.MISMATCH, ctr(1, 10), ctr(4, 10))); // 0.1 -> 0.4
        largest.accept(row("same-ctr", Status.MISMATCH, ctr(1, 10), ctr(2, 20))); // spend/counts differ, CTR not
        largest.accept(row("no-impressions", Status.MISMATCH, ctr(3, 0), ctr(0, 10)));
        largest.accept(row("only-batch", Status.MISSING_IN_STREAM, null, ctr(9, 10)));
        largest.accept(row("only-stream", Status.MISSING_IN_BATCH, ctr(9, 10), null));

        List<LargestRatioDiffs.Difference> kept = largest.largest();
        assertThat(kept).extracting(d -> d.row().key().dimension(0)).containsExactly("big-down", "big-up");
        assertThat(kept.get(0).streamValue()).isEqualTo(new BigDecimal("0.500000000000"));
        assertThat(kept.get(0).finalValue()).isEqualTo(new BigDecimal("0.100000000000"));
        assertThat(kept.get(0).difference()).isEqualTo(new BigDecimal("-0.400000000000"));
        assertThat(kept.get(1).difference()).isEqualTo(new BigDecimal("0.300000000000"));
    }

    @Test
    void anyRatioOfASetIsComparedByItsOwnMeasures() {
        // cvr = conversions / clicks: 1/2 streamed, 1/4 final.
        DerivedRatio cvr = SET.ratios().get(1);
        LargestRatioDiffs largest = new LargestRatioDiffs(SET, cvr, 1);
        largest.accept(row("c", Status.MISMATCH, MeasureValues.of(10, 2, 1, 0, 13), MeasureValues.of(10, 4, 1, 0, 15)));
        assertThat(largest.largest().get(0).difference()).isEqualTo(new BigDecimal("-0.250000000000"));
    }

    @Test
    void sameAsSortingEverything() {
        SplittableRandom random = new SplittableRandom(3);
        List<LargestRatioDiffs.Difference> all = new ArrayList<>();
        LargestRatioDiffs largest = new LargestRatioDiffs(SET, CTR, 25);
        for (int i = 0; i < 2_000; i++) {
            Row r = row(
                    "c" + i,
                    Status.MISMATCH,
                    ctr(random.nextInt(50), 1 + random.nextInt(500)),
                    ctr(random.nextInt(50), 1 + random.nextInt(500)));
            largest.accept(r);
            LargestRatioDiffs one = new LargestRatioDiffs(SET, CTR, 1);
            one.accept(r);
            all.addAll(one.largest());
        }
        all.sort(LargestRatioDiffs.LARGEST_FIRST);
        assertThat(largest.largest()).containsExactlyElementsOf(all.subList(0, 25));
        assertThat(largest.largest())
                .isSortedAccordingTo(Comparator.comparing((LargestRatioDiffs.Difference d) ->
                                d.difference().abs())
                        .reversed());
        assertThat(new LargestRatioDiffs(SET, CTR, 0).largest()).isEmpty();
        LargestRatioDiffs none = new LargestRatioDiffs(SET, null, 5);
        none.accept(row("big", Status.MISMATCH, ctr(5, 10), ctr(1, 10)));
        assertThat(none.largest()).as("a set without a ratio").isEmpty();
    }
}
