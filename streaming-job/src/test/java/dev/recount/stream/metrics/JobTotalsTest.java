package dev.recount.stream.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.event.InvalidReason;
import dev.recount.stream.route.DedupAndRouteTooLate;
import dev.recount.stream.route.LateAtWindowToBackfill;
import dev.recount.stream.route.RouteInvalidRecords;
import dev.recount.stream.window.WindowMetricsOperator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The job's totals: names the dashboards and alerts know, one line for people, and no dependency on operators. */
class JobTotalsTest {

    /** Renaming one would silently empty a dashboard panel or an alert: these are the names they read. */
    @Test
    void theNamesAreTheOnesDashboardsAndAlertsRead() {
        assertThat(List.of(
                        JobTotals.VALID_EVENTS,
                        JobTotals.INVALID_EVENTS,
                        JobTotals.DUPLICATES_DROPPED,
                        JobTotals.TOO_LATE_EVENTS,
                        JobTotals.TOO_LATE_AT_WINDOW,
                        JobTotals.WINDOW_FIRINGS,
                        JobTotals.LATE_REFIRINGS))
                .containsExactly(
                        "validEvents",
                        "invalidEvents",
                        "duplicatesDropped",
                        "tooLateEvents",
                        "tooLateAtWindow",
                        "windowFirings",
                        "lateRefirings");
        assertThat(JobTotals.invalid(InvalidReason.MALFORMED)).isEqualTo("invalidEvents.malformed");
    }

    /** Each operator counts its metric and its total under the same name. */
    @Test
    void theOperatorsCountUnderTheseNames() {
        assertThat(RouteInvalidRecords.VALID_EVENTS_METRIC).isEqualTo(JobTotals.VALID_EVENTS);
        assertThat(RouteInvalidRecords.INVALID_EVENTS_METRIC).isEqualTo(JobTotals.INVALID_EVENTS);
        assertThat(DedupAndRouteTooLate.DUPLICATES_METRIC).isEqualTo(JobTotals.DUPLICATES_DROPPED);
        assertThat(DedupAndRouteTooLate.TOO_LATE_METRIC).isEqualTo(JobTotals.TOO_LATE_EVENTS);
        assertThat(LateAtWindowToBackfill.METRIC).isEqualTo(JobTotals.TOO_LATE_AT_WINDOW);
        assertThat(WindowMetricsOperator.FIRINGS_METRIC).isEqualTo(JobTotals.WINDOW_FIRINGS);
        assertThat(WindowMetricsOperator.LATE_REFIRINGS_METRIC).isEqualTo(JobTotals.LATE_REFIRINGS);
    }

    @Test
    void summarisesTheTotalsInOneLineCountingBothKindsOfTooLate() {
        Map<String, Object> totals = Map.of(
                JobTotals.VALID_EVENTS,
                1_000L,
                JobTotals.invalid(InvalidReason.MALFORMED),
                5L,
                JobTotals.DUPLICATES_DROPPED,
                7L,
                JobTotals.TOO_LATE_EVENTS,
                3L,
                JobTotals.TOO_LATE_AT_WINDOW,
                2L,
                JobTotals.WINDOW_FIRINGS,
                40L,
                JobTotals.LATE_REFIRINGS,
                1L);

        assertThat(JobTotals.summary(totals))
                .startsWith("valid events 1,000; invalid 5 (malformed 5, schema 0")
                .endsWith("; duplicates dropped 7; too late 5; window firings 40 (late re-firings 1)");
        assertThat(JobTotals.get(Map.of(), JobTotals.VALID_EVENTS)).isZero();
    }

    /** The leaf the operators depend on must not depend on them back (that was a cycle). */
    @Test
    void importsNothingElseOfTheStreamingJob() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("src/main/java/dev/recount/stream/metrics"))) {
            for (Path f : files.toList()) {
                assertThat(Files.readAllLines(f))
                        .as(f.toString())
                        .filteredOn(line -> line.startsWith("import dev.recount.stream."))
                        .allMatch(line -> line.startsWith("import dev.recount.stream.metrics."));
            }
        }
    }
}
