package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.sets.MeasureValues;
import dev.recount.db.tables.ReconciledWindowsTable.Side;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ComparisonAssemblerTest {
    static final long W0 = 1_764_288_000_000L, W1 = W0 + 60_000;
    static final LocalDate DAY = LocalDate.of(2025, 11, 28);

    static ScopeSurvey.Window window(long start, long streamKeys, ScopeSurvey.Rows batch) {
        ScopeSurvey.Ends ends = new ScopeSurvey.Ends(start + 60_000, start + 60_000);
        return new ScopeSurvey.Window(
                start,
                new Side(streamKeys, 1),
                streamKeys == 0 ? ScopeSurvey.Ends.NONE : ends,
                new Side(batch.keys(), 2),
                batch.keys() == 0 ? ScopeSurvey.Ends.NONE : ends,
                batch,
                Side.EMPTY);
    }

    @Test
    void streamTotalsAreTheBatchsPlusTheDiffsDifferences() {
        // W0: 3 batch keys, of which 1 mismatches (stream +2 clicks) and 1 is missing in the stream (batch 5 imps);
        // the stream also has 1 key the batch lacks (4 imps). W1: only the stream has keys (2, missing in batch).
        ScopeSurvey.Rows b0 = new ScopeSurvey.Rows(3, MeasureValues.of(30, 3, 0, 300, 33));
        Map<Long, ScopeSurvey.Window> windows =
                new TreeMap<>(Map.of(W0, window(W0, 3, b0), W1, window(W1, 2, ScopeSurvey.Rows.none(5))));
        ScopeSurvey survey = new ScopeSurvey(windows, List.of(new ScopeSurvey.GroupDay("c", DAY, b0)), false, 5);
        DiffCounts.Counts d0 = new DiffCounts.Counts(1, 1, 1, 3, MeasureValues.of(-1, 2, 0, 0, 1));
        DiffCounts.Counts d1 = new DiffCounts.Counts(0, 0, 2, 2, MeasureValues.of(6, 0, 0, 60, 6));
        DiffCounts diffs = new DiffCounts(
                Map.of(W0, d0, W1, d1),
                Map.of(new DiffCounts.GroupDay("c", DAY), d0, new DiffCounts.GroupDay("only-stream", DAY), d1),
                5);

        Comparison c = ComparisonAssembler.assemble(survey, diffs);

        assertThat(c.windows())
                .extracting(w -> w.totals().counts())
                .containsExactly(new KeyCounts(4, 1, 1, 1, 1, 3), new KeyCounts(2, 0, 0, 0, 2, 2));
        assertThat(c.windows().get(0).totals().stream()).isEqualTo(MeasureValues.of(29, 5, 0, 300, 34));
        assertThat(c.windows().get(1).totals().stream()).isEqualTo(MeasureValues.of(6, 0, 0, 60, 6));
        assertThat(c.windows().get(1).totals().batch()).isEqualTo(MeasureValues.zeros(5));
        assertThat(c.range().counts()).isEqualTo(new KeyCounts(6, 1, 1, 1, 3, 5));
        assertThat(c.range().stream()).isEqualTo(MeasureValues.of(35, 5, 0, 360, 40));
        // A campaign-day the batch has no rows in still shows, from its diffs.
        assertThat(c.days()).extracting(Comparison.DayTotal::value).containsExactly("c", "only-stream");
        assertThat(c.days().get(1).totals().counts()).isEqualTo(new KeyCounts(2, 0, 0, 0, 2, 2));
    }

    @Test
    void diffsThatDoNotFitTheSurveyedStreamKeysFailTheRun() {
        ScopeSurvey.Rows b0 = new ScopeSurvey.Rows(3, MeasureValues.zeros(5));
        ScopeSurvey survey = new ScopeSurvey(Map.of(W0, window(W0, 5, b0)), List.of(), false, 5);
        assertThatThrownBy(() -> ComparisonAssembler.assemble(survey, new DiffCounts(Map.of(), Map.of(), 5)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the stream has 5 keys");
    }
}
