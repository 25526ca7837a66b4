package dev.recount.reconcile;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every group's totals of one metric set from the batch's rows (the survey) and the run's diffs, without joining keys. A key the
 * batch has either matches, mismatches or is missing in the stream, and the stream's keys are the batch's minus those
 * missing in the stream plus those missing in the batch; a matching key adds the same to both sides, so the stream's
 * sums are the batch's plus the diffs' stream − batch differences. Per window the stream's own key count (surveyed)
 * must come out the same: if not, the run fails rather than report totals that do not add up.
 */
final class ComparisonAssembler {
    private ComparisonAssembler() {}

    static Comparison assemble(ScopeSurvey survey, DiffCounts diffs) {
        List<Comparison.WindowTotal> windows = new ArrayList<>();
        GroupTotals range = GroupTotals.empty(survey.measures());
        for (ScopeSurvey.Window w : survey.windows().values()) {
            if (!w.compared()) continue;
            GroupTotals t = totals(w.batchRows(), diffs.window(w.windowStartMillis()));
            if (t.counts().compared() - t.counts().missingInStream()
                    != w.stream().keys()) {
                throw new IllegalStateException("window " + java.time.Instant.ofEpochMilli(w.windowStartMillis())
                        + ": the"
                        + " stream has " + w.stream().keys() + " keys, but the batch's keys and the diffs make it "
                        + (t.counts().compared() - t.counts().missingInStream()));
            }
            windows.add(new Comparison.WindowTotal(w.windowStartMillis(), w.windowEndMillis(), t));
            range = plus(range, t);
        }
        windows.sort(Comparator.comparingLong(Comparison.WindowTotal::windowStartMillis));

        Map<DiffCounts.GroupDay, ScopeSurvey.Rows> batch = new HashMap<>();
        for (ScopeSurvey.GroupDay gd : survey.days())
            batch.put(new DiffCounts.GroupDay(gd.value(), gd.day()), gd.batch());
        // A group-day only the stream has keys in has no batch rows, only diffs (missing in batch).
        Set<DiffCounts.GroupDay> all = new LinkedHashSet<>(batch.keySet());
        all.addAll(diffs.days().keySet());
        ScopeSurvey.Rows none = ScopeSurvey.Rows.none(survey.measures());
        List<Comparison.DayTotal> days = new ArrayList<>();
        for (DiffCounts.GroupDay gd : all) {
            days.add(
                    new Comparison.DayTotal(gd.value(), gd.day(), totals(batch.getOrDefault(gd, none), diffs.day(gd))));
        }
        days.sort(Comparator.comparing(Comparison.DayTotal::day).thenComparing(Comparison.DayTotal::value));
        return new Comparison(range, windows, days);
    }

    /** @throws IllegalStateException when the diffs cannot belong to these batch rows */
    static GroupTotals totals(ScopeSurvey.Rows batch, DiffCounts.Counts d) {
        long matched = batch.keys() - d.mismatched() - d.missingInStream();
        if (matched < 0) {
            throw new IllegalStateException("the diffs (" + d + ") do not fit " + batch.keys() + " batch keys");
        }
        long compared = matched + d.mismatched() + d.missingInStream() + d.missingInBatch();
        return new GroupTotals(
                new KeyCounts(
                        compared,
                        matched,
                        d.mismatched(),
                        d.missingInStream(),
                        d.missingInBatch(),
                        d.beyondTolerance()),
                batch.sums().plus(d.delta()),
                batch.sums());
    }

    private static GroupTotals plus(GroupTotals a, GroupTotals b) {
        KeyCounts x = a.counts(), y = b.counts();
        return new GroupTotals(
                new KeyCounts(
                        x.compared() + y.compared(),
                        x.matched() + y.matched(),
                        x.mismatched() + y.mismatched(),
                        x.missingInStream() + y.missingInStream(),
                        x.missingInBatch() + y.missingInBatch(),
                        x.beyondTolerance() + y.beyondTolerance()),
                a.stream().plus(b.stream()),
                a.batch().plus(b.batch()));
    }
}
