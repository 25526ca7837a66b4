package dev.recount.reconcile;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Every group's totals from the survey's per-side counts and sums and the run's diffs, without joining keys: a key
 * the stream has either matches, mismatches or is missing in the batch, so {@code compared = stream keys + missing
 * in stream} and {@code matched = stream keys − mismatched − missing in batch}. The sums are each side's own.
 */
final class ComparisonAssembler {
    private ComparisonAssembler() {}

    static Comparison assemble(ScopeSurvey survey, DiffCounts diffs) {
        List<Comparison.WindowTotal> windows = new ArrayList<>();
        GroupTotals range = GroupTotals.EMPTY;
        for (ScopeSurvey.Window w : survey.windows().values()) {
            if (!w.compared()) continue;
            GroupTotals t = totals(w.stream(), w.batch(), diffs.window(w.windowStartMillis()));
            windows.add(new Comparison.WindowTotal(w.windowStartMillis(), w.windowEndMillis(), t));
            range = plus(range, t);
        }
        windows.sort(Comparator.comparingLong(Comparison.WindowTotal::windowStartMillis));
        List<Comparison.CampaignDayTotal> campaignDays = new ArrayList<>();
        for (ScopeSurvey.CampaignDay cd : survey.campaignDays()) {
            campaignDays.add(new Comparison.CampaignDayTotal(cd.campaignId(), cd.day(),
                    totals(cd.stream(), cd.batch(), diffs.campaignDay(cd.campaignId(), cd.day()))));
        }
        campaignDays.sort(Comparator.comparing(Comparison.CampaignDayTotal::day)
                .thenComparing(Comparison.CampaignDayTotal::campaignId));
        return new Comparison(range, windows, campaignDays);
    }

    /** @throws IllegalArgumentException when the diffs cannot belong to these rows (KeyCounts' invariants) */
    static GroupTotals totals(ScopeSurvey.Rows stream, ScopeSurvey.Rows batch, DiffCounts.Counts d) {
        long compared = stream.keys() + d.missingInStream();
        long matched = stream.keys() - d.mismatched() - d.missingInBatch();
        if (matched < 0 || batch.keys() != matched + d.mismatched() + d.missingInStream()) {
            throw new IllegalStateException("the diffs (" + d + ") do not fit " + stream.keys() + " stream and "
                    + batch.keys() + " batch keys");
        }
        return new GroupTotals(new KeyCounts(compared, matched, d.mismatched(), d.missingInStream(), d.missingInBatch(),
                d.beyondTolerance()), stream.sums(), batch.sums());
    }

    private static GroupTotals plus(GroupTotals a, GroupTotals b) {
        KeyCounts x = a.counts(), y = b.counts();
        return new GroupTotals(new KeyCounts(x.compared() + y.compared(), x.matched() + y.matched(),
                x.mismatched() + y.mismatched(), x.missingInStream() + y.missingInStream(),
                x.missingInBatch() + y.missingInBatch(), x.beyondTolerance() + y.beyondTolerance()),
                a.stream().plus(b.stream()), a.batch().plus(b.batch()));
    }
}
