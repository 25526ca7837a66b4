package dev.recount.batch;

import dev.recount.core.sets.MetricSets;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code backfill affected}: the windows the backfill topic names, per metric set, recomputed. */
@Command(
        name = "affected",
        sortOptions = false,
        description = {
            "Recompute the windows named by the backfill topic (too-late events) since the last run, for each metric"
                    + " set a record names (or --set's).",
            "Offsets are committed only after results that include those events are committed; a record that"
                    + " cannot be settled yet (its event not visible in the lake, its window beyond the lake's"
                    + " completeness boundary, a set this run does not compute) waits in the table backfill_waiting,"
                    + " checked again by every run."
        })
final class AffectedCommand extends BackfillCommand {
    @Option(
            names = "--force",
            description = "Also recompute windows beyond the lake's completeness boundary, or in lake hours"
                    + " holding fewer rows than the stream archived into them.")
    boolean force;

    @Mixin
    TopicOptions topic;

    @Mixin
    SetOption set;

    @Override
    public Integer call() throws Exception {
        BackfillSettings settings = settings();
        topic.check();
        MetricSets sets = selected(settings, set);
        return withRunner(settings, sets, runner -> {
            BackfillRunner.AffectedReport report =
                    runner.recomputeAffected(force, topic.maxRecords, topic.skipDeletedInput);
            report(report.summary(), report.json());
        });
    }
}
