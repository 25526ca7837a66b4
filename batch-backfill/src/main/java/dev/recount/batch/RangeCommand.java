package dev.recount.batch;

import dev.recount.core.cli.Converters.InstantConverter;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.tables.BatchRunsTable.Mode;
import java.time.Instant;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code backfill range}: every window in {@code [from, to)} of every metric set (or {@code --set}'s) recomputed. */
@Command(
        name = "range",
        sortOptions = false,
        description = "Recompute every window in [from, to) of every metric set (or --set's) from the lake and"
                + " replace the batch result there.")
final class RangeCommand extends BackfillCommand {
    @Option(
            names = "--from",
            required = true,
            paramLabel = "INSTANT",
            converter = InstantConverter.class,
            description =
                    "First window start, ISO-8601 UTC (e.g. 2026-11-29T00:00:00Z); aligned to every set's window.")
    Instant from;

    @Option(
            names = "--to",
            required = true,
            paramLabel = "INSTANT",
            converter = InstantConverter.class,
            description = "End (exclusive), aligned to every set's window; must not be beyond the lake's completeness"
                    + " boundary.")
    Instant to;

    @Mixin
    RangeForce force;

    @Mixin
    SetOption set;

    @Override
    public Integer call() throws Exception {
        BackfillSettings settings = settings();
        MetricSets sets = selected(settings, set);
        TimeRange range = checkedRange(from, to, sets);
        return withRunner(settings, sets, runner -> {
            BackfillRunner.RangeReport report = runner.recomputeRange(Mode.RANGE, range, force.force);
            report(report.summary(), report.json());
        });
    }
}
