package dev.recount.batch;

import dev.recount.core.cli.Converters.DateConverter;
import dev.recount.core.cli.Converters.InstantConverter;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.cli.RecountCli;
import dev.recount.core.config.Durations;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code backfill compact}: the lake's small files of complete hours into a few large ones, then lake.retention. */
@Command(
        name = "compact",
        sortOptions = false,
        description = {
            "Rewrite the small files of complete lake hours into a few large files, then delete hours"
                    + " older than lake.retention (if set).",
            "Hours whose start falls in the range and that end at or before the lake's completeness boundary;"
                    + " hidden (in-progress) files are left alone. Each hour is swapped under the day's"
                    + " backfill lock: a backfill never sees it half done. Rerunning does nothing to a"
                    + " compacted hour and folds in files that arrived since."
        })
final class CompactCommand extends BackfillCommand {
    @CommandLine.ArgGroup(exclusive = true, multiplicity = "0..1")
    Scope scope;

    static final class Scope {
        @Option(
                names = "--date",
                required = true,
                paramLabel = "DATE",
                converter = DateConverter.class,
                description = "A calendar day in time-zone, e.g. 2026-11-28: the hours starting on it"
                        + " (default, without --from/--to: yesterday in time-zone).")
        LocalDate date;

        @CommandLine.ArgGroup(exclusive = false)
        Between between;
    }

    static final class Between {
        @Option(
                names = "--from",
                required = true,
                paramLabel = "INSTANT",
                converter = InstantConverter.class,
                description = "The hours starting at or after this instant (ISO-8601 UTC) ...")
        Instant from;

        @Option(
                names = "--to",
                required = true,
                paramLabel = "INSTANT",
                converter = InstantConverter.class,
                description = "... and before this one.")
        Instant to;
    }

    @Option(
            names = "--lookback",
            arity = "0..1",
            paramLabel = "DURATION",
            fallbackValue = "max-past",
            description = {
                "Also the hours of this long before the range, to fold in files late events added"
                        + " since they were compacted. Without a value: validation.max-past, as long as late events"
                        + " can arrive (what nightly uses)."
            })
    String lookback;

    /** The hours this run failed to compact, for {@link ScheduledRunMetrics#compact}. */
    private int hoursFailed;

    /** Pushes {@link ScheduledRunMetrics#compact} after the run. */
    @Override
    public Integer call() throws Exception {
        return pushingOutcome(
                this::compact, code -> ScheduledRunMetrics.compact(code, hoursFailed, main.clock.instant()));
    }

    private int compact() throws Exception {
        BackfillSettings settings = settings();
        TimeRange range;
        try {
            if (scope != null && scope.between != null) {
                range = TimeRange.of(scope.between.from, scope.between.to);
            } else {
                LocalDate day = scope != null ? scope.date : NightlyRange.previousDay(main.clock, settings.timeZone());
                range = new TimeRange(
                        day.atStartOfDay(settings.timeZone()).toInstant().toEpochMilli(),
                        day.plusDays(1)
                                .atStartOfDay(settings.timeZone())
                                .toInstant()
                                .toEpochMilli());
            }
            if (lookback != null) {
                Duration back = "max-past".equals(lookback) ? settings.maxPast() : Durations.parse(lookback);
                range = new TimeRange(range.fromMillis() - back.toMillis(), range.toMillis());
            }
        } catch (IllegalArgumentException e) {
            throw BackfillException.badArguments(e.getMessage());
        }
        TimeRange hours = range;
        return withSpark(settings, (spark, db, password, progress) -> {
            LakeCompactor.Report report = new LakeCompactor(spark, db, settings, main.clock, progress).compact(hours);
            report(report.summary(), report.json());
            hoursFailed = report.failed().size();
            if (report.failed().isEmpty()) return ExitCode.OK.code();
            report.failed()
                    .forEach((hour, why) -> spec.commandLine()
                            .getErr()
                            .println(RecountCli.path(spec) + ": compaction of " + hour + " failed: " + why));
            return ExitCode.FAILED.code();
        });
    }
}
