package dev.recount.reconcile;

import static dev.recount.reconcile.testutils.ReconcileDb.key;
import static dev.recount.reconcile.testutils.ReconcileDb.m;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.cli.ExitCode;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.window.WindowKey;
import dev.recount.reconcile.testutils.ReconcileDb;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line in-process: exit codes for within / beyond tolerance / not covered, nightly-dates and pending. */
class ReconcileCommandITCase {
    /** Days run midnight to midnight in New York (UTC-5 in November). */
    static final String ZONE = "America/New_York";

    static final Instant DAY_27 = Instant.parse("2026-11-27T05:00:00Z");
    static final Instant DAY_28 = Instant.parse("2026-11-28T05:00:00Z");
    static final Instant DAY_29 = Instant.parse("2026-11-29T05:00:00Z");
    static final Clock NOW = Clock.fixed(Instant.parse("2026-11-30T12:00:00Z"), ZoneOffset.UTC);
    static final WindowKey K = key(DAY_28.plusSeconds(3600), "camp-1", "web");

    @TempDir
    Path tmp;

    ReconcileDb db;
    Path config;
    String out;
    String err;

    @BeforeEach
    void setUp() throws Exception {
        db = ReconcileDb.fresh("cli");
        config = db.configFile(
                tmp,
                "time-zone=" + ZONE,
                "reconcile.report-dir=" + tmp.resolve("reports"),
                // 1 % of spend, or 10 micro-units, either way
                "reconcile.tolerance.spend_micros.relative=0.01",
                "reconcile.tolerance.spend_micros.absolute=10");
    }

    @AfterEach
    void tearDown() {
        db.close();
    }

    int run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        String[] all = new String[args.length + 2];
        all[0] = "--config";
        all[1] = config.toString();
        System.arraycopy(args, 0, all, 2, args.length);
        boolean sub = args.length > 0 && (args[0].equals("nightly-dates") || args[0].equals("pending"));
        int code = ReconcileMain.execute(
                new CommandEnvironment(db.environment(), NOW),
                new PrintWriter(o),
                new PrintWriter(e),
                sub ? withConfigAfter(args) : all);
        out = o.toString();
        err = e.toString();
        return code;
    }

    String[] withConfigAfter(String[] args) {
        String[] all = new String[args.length + 2];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--config";
        all[args.length + 1] = config.toString();
        return all;
    }

    @Test
    void exitCodeSaysWhetherTheDayIsWithinTolerance() throws Exception {
        db.stream(K, m(10, 1, 0, 1_000_000, 11), 1);
        db.batchRange(DAY_28, DAY_29, Map.of(K, m(10, 1, 0, 1_009_000, 11)));
        // 9000 micros off on 1009000 = 0.89 %: within 1 %.
        assertThat(run("--date", "2026-11-28")).isEqualTo(ExitCode.OK.code());
        assertThat(err).isEmpty();
        assertThat(out)
                .contains("WITHIN TOLERANCE")
                .contains("[2026-11-28T05:00:00Z, 2026-11-29T05:00:00Z)")
                .contains("1 mismatch");

        db.batchRange(DAY_28, DAY_29, Map.of(K, m(10, 1, 0, 1_020_000, 11)));
        // 20000 off on 1020000 = 1.96 %: beyond.
        assertThat(run("--from", DAY_28.toString(), "--to", DAY_29.toString()))
                .isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(out).contains("BEYOND TOLERANCE").contains("1 beyond tolerance");
        Path report = tmp.resolve("reports");
        try (var dirs = Files.list(report)) {
            assertThat(dirs.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("run-1-20261128T050000Z", "run-2-20261128T050000Z");
        }
    }

    @Test
    void jsonIsOneObjectWithExactTotalsEvenBeyondALong() throws Exception {
        // Two keys of the largest single spend each: the day's spend is 2^64 - 2 micros, beyond a long.
        BigInteger maxSpend = BigInteger.valueOf(Long.MAX_VALUE);
        WindowKey k2 = key(DAY_28.plusSeconds(7200), "camp-2", "web");
        MeasureValues big =
                new MeasureValues(BigInteger.ONE, BigInteger.ZERO, BigInteger.ZERO, maxSpend, BigInteger.ONE);
        db.stream(K, big, 1);
        db.stream(k2, m(5, 0, 0, 100, 5), 1);
        db.batchRange(DAY_28, DAY_29, Map.of(K, big, k2, big));

        assertThat(run("--date", "2026-11-28", "--json")).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(err).isEmpty();
        assertThat(out.strip().lines()).as("exactly one JSON object on stdout").hasSize(1);
        JsonNode json = new ObjectMapper().readTree(out);
        assertThat(json.get("run_id").asLong()).isEqualTo(1);
        assertThat(json.get("verdict").asText()).isEqualTo("beyond_tolerance");
        assertThat(json.get("dry_run").asBoolean()).isFalse();
        assertThat(json.get("from").asText()).isEqualTo(DAY_28.toString());
        assertThat(json.get("to").asText()).isEqualTo(DAY_29.toString());
        JsonNode keys = json.get("keys");
        assertThat(keys.get("compared").asLong()).isEqualTo(2);
        assertThat(keys.get("matched").asLong()).isEqualTo(1);
        assertThat(keys.get("mismatched").asLong()).isEqualTo(1);
        assertThat(keys.get("beyond_tolerance").asLong()).isEqualTo(1);
        JsonNode spend = json.get("totals").get("spend_micros");
        assertThat(spend.get("stream").isIntegralNumber())
                .as("an integer, not a double or a string")
                .isTrue();
        assertThat(spend.get("stream").bigIntegerValue()).isEqualTo(maxSpend.add(BigInteger.valueOf(100)));
        assertThat(spend.get("batch").bigIntegerValue()).isEqualTo(maxSpend.multiply(BigInteger.TWO));
        assertThat(spend.get("final").bigIntegerValue()).isEqualTo(maxSpend.multiply(BigInteger.TWO));
        assertThat(json.get("totals").get("events").get("stream").asLong()).isEqualTo(6);
        assertThat(json.get("totals").get("events").get("batch").asLong()).isEqualTo(2);
        assertThat(json.get("report").asText())
                .isEqualTo(tmp.resolve("reports")
                        .resolve("run-1-20261128T050000Z")
                        .resolve("report.html")
                        .toString());

        // A refusal stays one line on stderr, with nothing on stdout.
        assertThat(run("--date", "2026-11-27", "--json")).isEqualTo(ExitCode.REFUSED.code());
        assertThat(out).isEmpty();
        assertThat(err.strip()).startsWith("recount reconcile: refused:").doesNotContain("\n");
    }

    @Test
    void refusesADayTheBatchHasNotCovered() throws Exception {
        db.stream(K, m(10, 1, 0, 1_000_000, 11), 1);
        assertThat(run("--date", "2026-11-28")).isEqualTo(ExitCode.REFUSED.code());
        assertThat(err.strip())
                .startsWith("recount reconcile: refused: no succeeded batch run covers")
                .doesNotContain("\n");
        assertThat(out).isEmpty();
    }

    @Test
    void reconcilesTheWindowsOfABatchRun() throws Exception {
        db.stream(K, m(10, 1, 0, 1_000_000, 11), 1);
        long runId = db.batchRange(DAY_28, DAY_29, Map.of(K, m(10, 1, 0, 1_000_000, 11)));
        assertThat(run("--batch-run", String.valueOf(runId))).isEqualTo(ExitCode.OK.code());
        assertThat(out).contains("batch run " + runId).contains("1 match");
        assertThat(run("--batch-run", "999")).isEqualTo(ExitCode.REFUSED.code());
        assertThat(err).contains("batch run 999 does not exist");
    }

    @Test
    void nightlyDatesListsTheDaysNotYetReconciledInOrder() throws Exception {
        db.batchRange(DAY_27, DAY_29, Map.<WindowKey, MeasureValues>of());
        assertThat(run("--date", "2026-11-28")).isZero();

        assertThat(run("nightly-dates", "--since", "2026-11-25")).isZero();
        // Until yesterday (the 29th in New York): the 28th is done.
        assertThat(out.lines().toList()).containsExactly("2026-11-25", "2026-11-26", "2026-11-27", "2026-11-29");
        assertThat(run("nightly-dates", "--since", "2026-11-28", "--until", "2026-11-28"))
                .isZero();
        assertThat(out).isEmpty();

        // A range run that spans two days does not make either of them done.
        assertThat(run("--from", DAY_27.toString(), "--to", DAY_29.toString())).isZero();
        assertThat(run("nightly-dates", "--since", "2026-11-27", "--until", "2026-11-28"))
                .isZero();
        assertThat(out.lines().toList()).containsExactly("2026-11-27");
        assertThat(run("nightly-dates", "--since", "2026-11-28", "--until", "2026-11-27"))
                .isEqualTo(ExitCode.USAGE.code());
    }

    @Test
    void pendingReconcilesEveryDayNotYetDoneAndSaysWhichLackABackfill() throws Exception {
        db.stream(K, m(10, 1, 0, 1_000_000, 11), 1);
        db.batchRange(DAY_27, DAY_29, Map.of(K, m(10, 1, 0, 1_000_000, 11)));

        // The 27th and 28th are covered by the batch; yesterday (the 29th in New York) is not yet.
        assertThat(run("pending", "--days", "3")).isEqualTo(ExitCode.REFUSED.code());
        assertThat(err)
                .contains("recount reconcile pending: --days is deprecated, use --since (--days N is --since Nd)");
        assertThat(out).contains("2026-11-27: reconcile", "2026-11-28: reconcile", "2026-11-29: reconcile");
        assertThat(err).contains("2026-11-29: not reconciled: no succeeded backfill covers it");

        // Only the 29th is left; once its backfill lands while pending waits, it is reconciled too.
        Instant day30 = Instant.parse("2026-11-30T05:00:00Z");
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        CommandLine cmd =
                new CommandLine(new ReconcilePendingCommand(new CommandEnvironment(db.environment(), NOW), d -> {
                    try {
                        db.batchRange(DAY_29, day30, Map.<WindowKey, MeasureValues>of());
                    } catch (java.sql.SQLException ex) {
                        throw new IllegalStateException(ex);
                    }
                }));
        cmd.setOut(new PrintWriter(o, true));
        cmd.setErr(new PrintWriter(e, true));
        assertThat(cmd.execute("--since", "3d", "--wait", "3h", "--config", config.toString()))
                .as(e.toString())
                .isEqualTo(ExitCode.OK.code());
        assertThat(o.toString()).contains("2026-11-29: reconcile").doesNotContain("2026-11-28: reconcile");
        assertThat(e.toString()).contains("2026-11-29: no succeeded backfill covers it yet; retrying in 5m");
        assertThat(run("pending", "--since", "3d")).isZero();
        assertThat(out).contains("nothing to do since 2026-11-27");
    }

    @Test
    void dryRunExitsByVerdictAppliesNothingAndDoesNotCountAsReconciled() throws Exception {
        db.stream(K, m(10, 1, 0, 1_000_000, 11), 1);
        db.batchRange(DAY_27, DAY_29, Map.of(K, m(10, 1, 0, 1_020_000, 11)));
        assertThat(run("--date", "2026-11-28", "--dry-run")).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(err).isEmpty();
        assertThat(out)
                .contains("BEYOND TOLERANCE (DRY RUN: nothing applied)")
                .contains("would correct: 1 keys to finalize or change, 1 values to change")
                .contains("final if applied");
        try (Connection c = db.admin();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT (SELECT count(*) FROM window_corrections) + (SELECT count(*)"
                        + " FROM correction_log), (SELECT bool_and(dry_run) FROM reconciliation_runs)")) {
            rs.next();
            assertThat(rs.getLong(1)).as("nothing applied").isZero();
            assertThat(rs.getBoolean(2)).isTrue();
        }
        // The day is still to be reconciled.
        assertThat(run("nightly-dates", "--since", "2026-11-28", "--until", "2026-11-28"))
                .isZero();
        assertThat(out.lines().toList()).containsExactly("2026-11-28");
        assertThat(run("--date", "2026-11-28")).isEqualTo(ExitCode.BEYOND_TOLERANCE.code());
        assertThat(run("nightly-dates", "--since", "2026-11-28", "--until", "2026-11-28"))
                .isZero();
        assertThat(out).isEmpty();
    }

    @Test
    void aFailedRunIsRecordedAndLeavesNothingBehind() throws Exception {
        db.stream(K, m(10, 1, 0, 1_000_000, 11), 1);
        db.batchRange(DAY_28, DAY_29, Map.of(K, m(10, 1, 0, 1_000_000, 11)));
        // The report directory cannot be created: a file stands where it should go.
        Path blocker = tmp.resolve("blocked");
        Files.writeString(blocker, "not a directory");
        assertThat(run("--date", "2026-11-28", "--report-dir", blocker.toString()))
                .isEqualTo(ExitCode.FAILED.code());
        assertThat(err.strip())
                .startsWith("recount reconcile: ")
                .contains("Not a directory")
                .doesNotContain("\n");
        try (Connection c = db.admin();
                Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT status, error FROM reconciliation_runs")) {
                rs.next();
                assertThat(rs.getString("status")).isEqualTo("failed");
                assertThat(rs.getString("error")).isNotBlank();
            }
            try (ResultSet rs = st.executeQuery("SELECT (SELECT count(*) FROM window_corrections) + (SELECT count(*)"
                    + " FROM correction_log) + (SELECT count(*) FROM reconciliation_diffs)")) {
                rs.next();
                assertThat(rs.getLong(1)).as("rolled back").isZero();
            }
        }
    }
}
