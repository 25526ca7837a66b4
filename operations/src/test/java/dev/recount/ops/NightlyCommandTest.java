package dev.recount.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.SparkSessions;
import dev.recount.core.cli.RecountCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** nightly's command line and how the steps' exit codes become its own, with scripted steps (no Spark, no database). */
class NightlyCommandTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T06:00:00Z"), ZoneOffset.UTC);
    private static final LocalDate YESTERDAY = LocalDate.parse("2026-11-28");
    private static final OperationsEnvironment ENV = new OperationsEnvironment(Map.of(), CLOCK, SparkSessions.OWNED);

    /** Records every step and answers with the codes queued for it (0 when none is left). */
    static final class ScriptedSteps implements NightlySteps {
        final List<String> calls = new ArrayList<>();
        final Deque<Integer> backfill = new ArrayDeque<>();
        final Deque<Integer> compact = new ArrayDeque<>();
        final Deque<Integer> reconcile = new ArrayDeque<>();
        List<LocalDate> pending = List.of();

        @Override
        public int backfill(LocalDate day) {
            calls.add("backfill " + day);
            return backfill.isEmpty() ? 0 : backfill.poll();
        }

        @Override
        public int compact(LocalDate day) {
            calls.add("compact " + day);
            return compact.isEmpty() ? 0 : compact.poll();
        }

        @Override
        public int reconcile(LocalDate day) {
            calls.add("reconcile " + day);
            return reconcile.isEmpty() ? 0 : reconcile.poll();
        }

        @Override
        public List<LocalDate> pending(LocalDate since, LocalDate until) {
            calls.add("pending " + since + ".." + until);
            return pending;
        }
    }

    final ScriptedSteps steps = new ScriptedSteps();
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();

    int nightly(String... args) {
        CommandLine cmd = RecountCli.configure(new CommandLine(new NightlyCommand(ENV).withSteps(steps)))
                .exitCodes(ExitCodes.class)
                .commandLine();
        return RecountCli.execute(cmd, new PrintWriter(out, true), new PrintWriter(err, true), args);
    }

    static List<String> day(LocalDate d) {
        return List.of("backfill " + d, "compact " + d, "reconcile " + d);
    }

    @Test
    void withoutArgumentsRunsTheThreeStepsForYesterdayInTheConfiguredZone() {
        assertThat(nightly()).isEqualTo(ExitCodes.OK);
        assertThat(steps.calls).isEqualTo(day(YESTERDAY));
    }

    @Test
    void dateTakesBothTheSeparateAndTheEqualsForm() {
        assertThat(nightly("--date=2026-11-20")).as(err.toString()).isEqualTo(ExitCodes.OK);
        assertThat(nightly("--date", "2026-11-21")).isEqualTo(ExitCodes.OK);
        List<String> expected = new ArrayList<>(day(LocalDate.parse("2026-11-20")));
        expected.addAll(day(LocalDate.parse("2026-11-21")));
        assertThat(steps.calls).isEqualTo(expected);
    }

    @Test
    void sinceRunsEveryPendingDayOldestFirst() {
        steps.pending = List.of(LocalDate.parse("2026-11-25"), LocalDate.parse("2026-11-27"));
        assertThat(nightly("--since=2026-11-25")).isEqualTo(ExitCodes.OK);
        List<String> expected = new ArrayList<>(List.of("pending 2026-11-25..2026-11-28"));
        expected.addAll(day(LocalDate.parse("2026-11-25")));
        expected.addAll(day(LocalDate.parse("2026-11-27")));
        assertThat(steps.calls).isEqualTo(expected);
    }

    @Test
    void sinceWithNothingPendingDoesNothing() {
        assertThat(nightly("--since", "2026-11-25")).isEqualTo(ExitCodes.OK);
        assertThat(steps.calls).containsExactly("pending 2026-11-25..2026-11-28");
        assertThat(out.toString()).contains("nothing to catch up since 2026-11-25");
    }

    @Test
    void usageErrorsExitTwoAndRunNothing() {
        assertThat(nightly("--date", "2026-11-20", "--since", "2026-11-19")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("give --date or --since, not both");
        assertThat(nightly("--date=28.11.2026")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("cannot read date '28.11.2026'");
        assertThat(nightly("--since", "2026-11-29")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("is after yesterday (2026-11-28");
        assertThat(nightly("--days", "3")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("Unknown options: '--days'");
        assertThat(steps.calls).isEmpty();
    }

    @Test
    void helpPrintsTheOptionsAndTheExitCodes() {
        assertThat(nightly("--help")).isEqualTo(ExitCodes.OK);
        assertThat(out.toString())
                .contains("--date=D", "--since=D", "Exit codes:", "4   backfill refused", "9   compaction failed");
        assertThat(steps.calls).isEmpty();
    }

    @Test
    void aRefusedBackfillIsLakeIncompleteAndStopsBeforeLaterDays() {
        steps.pending = List.of(LocalDate.parse("2026-11-26"), LocalDate.parse("2026-11-27"));
        steps.backfill.add(dev.recount.batch.ExitCodes.REFUSED_BY_BOUNDARY);
        assertThat(nightly("--since", "2026-11-26")).isEqualTo(ExitCodes.LAKE_INCOMPLETE);
        assertThat(steps.calls).containsExactly("pending 2026-11-26..2026-11-28", "backfill 2026-11-26");
        assertThat(err.toString()).contains("2026-11-26: backfill did not succeed (exit 4); later days not run");
    }

    @Test
    void beyondToleranceOnOneDayGoesOnAndIsTheResult() {
        steps.pending = List.of(LocalDate.parse("2026-11-26"), LocalDate.parse("2026-11-27"));
        steps.reconcile.add(dev.recount.reconcile.ExitCodes.BEYOND_TOLERANCE);
        assertThat(nightly("--since", "2026-11-26")).isEqualTo(ExitCodes.BEYOND_TOLERANCE);
        assertThat(steps.calls).hasSize(7);
    }

    @Test
    void aFailedCompactionGoesOnAndIsReportedOnlyWhenNothingWorseHappened() {
        steps.compact.add(dev.recount.batch.ExitCodes.FAILED);
        assertThat(nightly()).isEqualTo(ExitCodes.COMPACTION_FAILED);
        assertThat(steps.calls).isEqualTo(day(YESTERDAY));

        steps.compact.add(dev.recount.batch.ExitCodes.LOCK_TIMEOUT);
        steps.reconcile.add(dev.recount.reconcile.ExitCodes.BEYOND_TOLERANCE);
        assertThat(nightly()).isEqualTo(ExitCodes.BEYOND_TOLERANCE);
    }

    @Test
    void aReconcileThatIsRefusedOrFailsStopsWithItsOwnCode() {
        steps.reconcile.add(dev.recount.reconcile.ExitCodes.NOT_COVERED);
        assertThat(nightly()).isEqualTo(ExitCodes.RECONCILE_REFUSED);
        steps.reconcile.add(dev.recount.reconcile.ExitCodes.ERROR);
        assertThat(nightly()).isEqualTo(ExitCodes.RECONCILE_FAILED);
    }

    @Test
    void backfillFailuresKeepTheirMeaning() {
        steps.backfill.add(dev.recount.batch.ExitCodes.LOCK_TIMEOUT);
        assertThat(nightly()).isEqualTo(ExitCodes.LOCK_TIMEOUT);
        steps.backfill.add(dev.recount.batch.ExitCodes.FAILED);
        assertThat(nightly()).isEqualTo(ExitCodes.BACKFILL_FAILED);
        assertThat(steps.calls).containsExactly("backfill " + YESTERDAY, "backfill " + YESTERDAY);
    }
}
