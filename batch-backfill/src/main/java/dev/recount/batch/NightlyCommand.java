package dev.recount.batch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.Converters.DateConverter;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.tables.BatchRunsTable.Mode;
import java.time.LocalDate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code backfill nightly}: the previous day of every metric set (or {@code --set}'s), then the affected windows. */
@Command(
        name = "nightly",
        sortOptions = false,
        description = {
            "Recompute the previous day (or --date) in the configured time-zone, then the affected windows, of every"
                    + " metric set (or --set's).",
            "The day is [midnight, next midnight) in time-zone: 23 or 25 hours on daylight"
                    + " saving days; a window belongs to the day its start falls in. Rerunning a date replaces the"
                    + " same rows."
        })
final class NightlyCommand extends BackfillCommand {
    @Option(
            names = "--date",
            paramLabel = "DATE",
            converter = DateConverter.class,
            description = "The day to recompute, e.g. 2026-11-28 (default: yesterday in time-zone).")
    LocalDate date;

    @Mixin
    RangeForce force;

    @Mixin
    TopicOptions topic;

    @Mixin
    SetOption set;

    /** Pushes {@link ScheduledRunMetrics#nightly} after the run. */
    @Override
    public Integer call() throws Exception {
        return pushingOutcome(this::nightly, code -> ScheduledRunMetrics.nightly(code, main.clock.instant()));
    }

    private int nightly() throws Exception {
        BackfillSettings settings = settings();
        topic.check();
        MetricSets sets = selected(settings, set);
        LocalDate day = date != null ? date : NightlyRange.previousDay(main.clock, settings.timeZone());
        TimeRange range;
        try {
            range = NightlyRange.forDate(day, settings.timeZone(), sets);
        } catch (IllegalArgumentException e) {
            throw BackfillException.badArguments("nightly " + day + ": " + e.getMessage());
        }
        return withRunner(settings, sets, runner -> {
            BackfillRunner.RangeReport dayRun = runner.recomputeRange(Mode.NIGHTLY, range, force.force);
            if (!json.enabled()) out().println(dayRun.summary());
            BackfillRunner.AffectedReport affected =
                    runner.recomputeAffected(force.force, topic.maxRecords, topic.skipDeletedInput);
            // One object for both runs: the day's recompute, then the affected windows.
            ObjectNode both = JsonOutput.object();
            both.put("mode", Mode.NIGHTLY.wireName());
            both.put("date", day.toString());
            both.set("range", dayRun.json());
            both.set("affected", affected.json());
            report(affected.summary(), both);
        });
    }
}
