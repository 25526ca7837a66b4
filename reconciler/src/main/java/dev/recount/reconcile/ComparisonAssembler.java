package dev.recount.reconcile;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every group's totals from the batch's rows (the survey) and the run's diffs, without joining keys. A key the
 * batch has either matches, mismatches or is missing in the stream, and the stream's keys are the batch's minus those
 * missing in the stream plus those missing in the batch; a matching key adds the same to both sides, so the stream's
 * sums are the batch's plus the diffs' stream − batch differences. Per window the stream's own key count (surveyed)
 * must come out the same: if not, the run fails rather than report totals that do not add up.
 */
final class ComparisonAssembler {
    private ComparisonAssembler() {}

    static Comparison assemble(ScopeSurvey survey, DiffCounts diffs) {
        List<Comparison.WindowTotal> windows = new ArrayList<>();
        GroupTotals range = GroupTotals.EMPTY;
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

        Map<DiffCounts.CampaignDay, ScopeSurvey.Rows> batch = new HashMap<>();
        for (ScopeSurvey.CampaignDay cd : survey.campaignDays())
            batch.put(new DiffCounts.CampaignDay(cd.campaignId(), cd.day()), cd.batch());
        // A campaign-day only the stream has keys in has no batch rows, only diffs (missing in batch).
        Set<DiffCounts.CampaignDay> all = new LinkedHashSet<>(batch.keySet());
        all.addAll(diffs.campaignDays().keySet());
        List<Comparison.CampaignDayTotal> campaignDays = new ArrayList<>();
        for (DiffCounts.CampaignDay cd : all) {
            campaignDays.add(new Comparison.CampaignDayTotal(
                    cd.campaignId(),
                    cd.day(),
                    totals(batch.getOrDefault(cd, ScopeSurvey.Rows.NONE), diffs.campaignDay(cd))));
        }
        campaignDays.sort(Comparator.comparing(Comparison.CampaignDayTotal::day)
                .thenComparing(Comparison.CampaignDayTotal::campaignId));
        return new Comparison(range, windows, campaignDays);
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
