package dev.recount.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.SparkSessions;
import dev.recount.core.cli.ExitCode;
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
        CommandLine cmd = RecountCli.of("nightly alone", new NightlyCommand(ENV).withSteps(steps))
                .commandLine();
        String[] command = new String[args.length + 1];
        command[0] = "nightly";
        System.arraycopy(args, 0, command, 1, args.length);
        return RecountCli.execute(cmd, new PrintWriter(out, true), new PrintWriter(err, true), command);
    }

    static List<String> day(LocalDate d) {
        return List.of("backfill " + d, "compact " + d, "reconcile " + d);
    }

    @Test
    void withoutArgumentsRunsTheThreeStepsForYesterdayInTheConfiguredZone() {
        assertThat(nightly()).isEqualTo(ExitCode.OK.code());
        assertThat(steps.calls).isEqualTo(day(YESTERDAY));
    }

    @Test
    void dateTakesBothTheSeparateAndTheEqualsForm() {
        assertThat(nightly("--date=2026-11-20")).as(err.toString()).isEqualTo(ExitCode.OK.code());
        assertThat(nightly("--date", "2026-11-21")).isEqualTo(ExitCode.OK.code());
        List<String> expected = new ArrayList<>(day(LocalDate.parse("2026-11-20")));
        expected.addAll(day(LocalDate.parse("2026-11-21")));
        assertThat(steps.calls).isEqualTo(expected);
    }

    @Test
    void sinceRunsEveryPendingDayOldestFirst() {
        steps.pending = List.of(LocalDate.parse("2026-11-25"), LocalDate.parse("2026-11-27"));
        assertThat(nightly("--since=2026-11-25")).isEqualTo(ExitCode.OK.code());
        List<String> expected = new ArrayList<>(List.of("pending 2026-11-25..2026-11-28"));
        expected.addAll(day(LocalDate.parse("2026-11-25")));
        expected.addAll(day(LocalDate.parse("2026-11-27")));
        assertThat(steps.calls).isEqualTo(expected);
    }

    @Test
    void sinceAlsoTakesANumberOfDaysBack() {
        assertThat(nightly("--since", "4d")).as(err.toString()).isEqualTo(ExitCode.OK.code());
        assertThat(steps.calls).containsExactly("pending 2026-11-25..2026-11-28");
    }

    @Test
    void jsonIsOneObjectWithEachStepsCodeAndNothingElseOnStdout() {
        steps.pending = List.of(LocalDate.parse("2026-11-26"), LocalDate.parse("2026-11-27"));
        steps.compact.add(ExitCode.FAILED.code());
        steps.reconcile.add(ExitCode.OK.code());
        steps.reconcile.add(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(nightly("--since", "2026-11-26", "--json")).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(out.toString().strip())
                .isEqualTo("{\"dates\":[{\"date\":\"2026-11-26\",\"backfill\":0,\"compact\":1,\"reconcile\":0},"
                        + "{\"date\":\"2026-11-27\",\"backfill\":0,\"compact\":0,\"reconcile\":3}],"
                        + "\"exit_code\":3,\"outcome\":\"beyond tolerance\"}");
    }

    @Test
    void sinceWithNothingPendingDoesNothing() {
        assertThat(nightly("--since", "2026-11-25")).isEqualTo(ExitCode.OK.code());
        assertThat(steps.calls).containsExactly("pending 2026-11-25..2026-11-28");
        assertThat(out.toString()).contains("nothing to catch up since 2026-11-25");
    }

    @Test
    void usageErrorsExitTwoAndRunNothing() {
        assertThat(nightly("--date", "2026-11-20", "--since", "2026-11-19")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("give --date or --since, not both");
        assertThat(nightly("--date=28.11.2026")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("cannot read date '28.11.2026'");
        assertThat(nightly("--since", "2026-11-29")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("is after yesterday (2026-11-28");
        assertThat(nightly("--days", "3")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("Unknown options: '--days'");
        assertThat(steps.calls).isEmpty();
    }

    @Test
    void helpPrintsTheOptionsAndTheExitCodes() {
        assertThat(nightly("--help")).isEqualTo(ExitCode.OK.code());
        assertThat(out.toString())
                .contains(
                        "--date=D",
                        "--since=D",
                        "Exit codes:",
                        "4   refused: the backfill refused",
                        "6   partly: compaction failed");
        assertThat(steps.calls).isEmpty();
    }

    @Test
    void aRefusedBackfillIsLakeIncompleteAndStopsBeforeLaterDays() {
        steps.pending = List.of(LocalDate.parse("2026-11-26"), LocalDate.parse("2026-11-27"));
        steps.backfill.add(ExitCode.REFUSED.code());
        assertThat(nightly("--since", "2026-11-26")).isEqualTo(ExitCode.REFUSED.code());
        assertThat(steps.calls).containsExactly("pending 2026-11-26..2026-11-28", "backfill 2026-11-26");
        assertThat(err.toString()).contains("2026-11-26: backfill did not succeed (exit 4); later days not run");
    }

    @Test
    void beyondToleranceOnOneDayGoesOnAndIsTheResult() {
        steps.pending = List.of(LocalDate.parse("2026-11-26"), LocalDate.parse("2026-11-27"));
        steps.reconcile.add(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(nightly("--since", "2026-11-26")).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(steps.calls).hasSize(7);
    }

    @Test
    void aFailedCompactionGoesOnAndIsReportedOnlyWhenNothingWorseHappened() {
        steps.compact.add(ExitCode.FAILED.code());
        assertThat(nightly()).isEqualTo(ExitCode.PARTLY.code());
        assertThat(steps.calls).isEqualTo(day(YESTERDAY));

        steps.compact.add(ExitCode.BUSY.code());
        steps.reconcile.add(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(nightly()).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
    }

    @Test
    void aReconcileThatIsRefusedOrFailsStopsWithItsOwnCode() {
        steps.reconcile.add(ExitCode.REFUSED.code());
        assertThat(nightly()).isEqualTo(ExitCode.REFUSED.code());
        steps.reconcile.add(ExitCode.FAILED.code());
        assertThat(nightly()).isEqualTo(ExitCode.FAILED.code());
    }

    @Test
    void backfillFailuresKeepTheirMeaning() {
        steps.backfill.add(ExitCode.BUSY.code());
        assertThat(nightly()).isEqualTo(ExitCode.BUSY.code());
        steps.backfill.add(ExitCode.FAILED.code());
        assertThat(nightly()).isEqualTo(ExitCode.FAILED.code());
        assertThat(steps.calls).containsExactly("backfill " + YESTERDAY, "backfill " + YESTERDAY);
    }
}
