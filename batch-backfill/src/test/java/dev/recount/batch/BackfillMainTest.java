package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.cli.ExitCode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line in-process: parsing, --help and the exit codes of bad arguments. None of these reach
 * Spark or the database (the provider below fails the test if asked for a session).
 */
class BackfillMainTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T06:00:00Z"), ZoneOffset.UTC);

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @TempDir
    Path dir;

    @Test
    void everyCommandHasHelp() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString())
                .contains("range", "affected", "nightly", "compact", "Exit codes:", "busy: an overlapping backfill");
        assertThat(run("range", "--help")).isZero();
        assertThat(out.toString()).contains("--from", "--to", "--force", "--set", "--config", "--lake", "--master");
        assertThat(run("affected", "--help")).isZero();
        assertThat(out.toString()).contains("--force", "--max-records", "--set", "--config");
        assertThat(run("nightly", "--help")).isZero();
        assertThat(out.toString()).contains("--date", "--force", "--max-records", "--set", "time-zone");
        assertThat(run("compact", "--help")).isZero();
        assertThat(out.toString()).contains("--date", "--from", "--to", "--lookback", "lake.retention");
    }

    @Test
    void compactTakesADayOrARangeNotBoth() {
        assertThat(run(
                        "compact",
                        "--date",
                        "2026-11-28",
                        "--from",
                        "2026-11-28T00:00:00Z",
                        "--to",
                        "2026-11-29T00:00:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("mutually exclusive");
        assertThat(run("compact", "--from", "2026-11-28T00:00:00Z")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("--to");
        assertThat(run("compact", "--from", "2026-11-28T01:00:00Z", "--to", "2026-11-28T01:00:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("must not be empty");
        assertThat(run("compact", "--lookback", "soon")).isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("cannot read duration 'soon'");
    }

    @Test
    void lakeSettingsAreCheckedBeforeAnythingRuns() throws IOException {
        Path shortRetention = Files.writeString(dir.resolve("retention.properties"), "lake.retention=7d\n");
        assertThat(run("compact", "--config", shortRetention.toString())).isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("lake.retention 7d is too short: it must be at least validation.max-past + 1d = 8d");

        Path badSize = Files.writeString(dir.resolve("size.properties"), "lake.compaction.target-file-size=big\n");
        assertThat(run(
                        "range",
                        "--config",
                        badSize.toString(),
                        "--from",
                        "2026-11-28T10:00:00Z",
                        "--to",
                        "2026-11-28T11:00:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("setting lake.compaction.target-file-size: cannot read size 'big'");

        Path tiny = Files.writeString(dir.resolve("tiny.properties"), "lake.compaction.target-file-size=64k\n");
        assertThat(run("compact", "--config", tiny.toString())).isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("lake.compaction.target-file-size must be at least 1m");
    }

    @Test
    void aMissingCommandIsABadArgument() {
        assertThat(run()).isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("missing command: range, affected, nightly or compact");
    }

    @Test
    void unreadableOrMissingInstantsAreBadArguments() {
        assertThat(run("range", "--from", "yesterday", "--to", "2026-11-28T11:00:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("cannot read instant 'yesterday'");
        assertThat(run("range", "--from", "2026-11-28T10:00:00Z")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("--to");
    }

    @Test
    void aRangeThatIsNotWindowAlignedIsRefusedBeforeAnythingRuns() {
        assertThat(run("range", "--from", "2026-11-28T10:00:30Z", "--to", "2026-11-28T11:00:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("--from 2026-11-28T10:00:30Z is not aligned to the 1m window of metric set default;"
                + " use 2026-11-28T10:00:00Z or 2026-11-28T10:01:00Z");
    }

    @Test
    void anUnknownSetOrABadDefinitionsFileIsABadArgument() throws IOException {
        assertThat(run("range", "--set", "nope", "--from", "2026-11-28T10:00:00Z", "--to", "2026-11-28T11:00:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("no metric set named 'nope' in built-in config/metric-sets.yaml; its sets are [default]");
        assertThat(run("affected", "--set", "nope")).isEqualTo(ExitCode.USAGE.code());
        assertThat(run("nightly", "--set", "nope")).isEqualTo(ExitCode.USAGE.code());

        Path sets =
                Files.writeString(dir.resolve("sets.yaml"), "version: 1\nsets:\n  - name: default\n    window: 7x\n");
        Path config = Files.writeString(dir.resolve("sets.properties"), "metric-sets.file=" + sets + "\n");
        assertThat(run("affected", "--config", config.toString())).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).startsWith("recount backfill affected: ").contains(sets.toString());
    }

    @Test
    void anEmptyRangeIsABadArgument() {
        assertThat(run("range", "--from", "2026-11-28T10:00:00Z", "--to", "2026-11-28T10:00:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("must not be empty");
    }

    @Test
    void windowSizeComesFromTheConfigFile() throws IOException {
        Path config = Files.writeString(dir.resolve("recount.properties"), "window.size=1h\n");
        assertThat(run(
                        "range",
                        "--config",
                        config.toString(),
                        "--from",
                        "2026-11-28T10:01:00Z",
                        "--to",
                        "2026-11-28T11:00:00Z"))
                .isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("not aligned to the 1h window of metric set default");
    }

    @Test
    void badSettingsAndOptionsAreBadArguments() throws IOException {
        Path config = Files.writeString(dir.resolve("typo.properties"), "batch.lock-timout=1m\n");
        assertThat(run("affected", "--config", config.toString())).isEqualTo(ExitCode.USAGE.code());
        assertOneLineError("unknown setting 'batch.lock-timout'");

        assertThat(run("nightly", "--date", "2026-13-01")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("cannot read date '2026-13-01'");

        assertThat(run("affected", "--max-records", "0")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("--max-records must be at least 1");

        assertThat(run("range", "--from", "2026-11-28T10:00:00Z", "--to", "2026-11-28T11:00:00Z", "--bogus"))
                .isEqualTo(ExitCode.USAGE.code());
        assertThat(err.toString()).contains("--bogus");
    }

    private int run(String... args) {
        out.getBuffer().setLength(0);
        err.getBuffer().setLength(0);
        BackfillMain main = new BackfillMain(
                Map.of(),
                CLOCK,
                new SparkSessions() {
                    @Override
                    public SparkSession open(BackfillSettings settings, String masterOverride) {
                        throw new AssertionError("argument errors must be caught before Spark starts");
                    }

                    @Override
                    public void release(SparkSession session) {}
                },
                BackfillRunner.DEFAULT_DRIVER_MAX_ROWS);
        return BackfillMain.execute(main, new PrintWriter(out, true), new PrintWriter(err, true), args);
    }

    private void assertOneLineError(String expected) {
        assertThat(err.toString()).startsWith("recount backfill").contains(expected);
        assertThat(err.toString().strip().lines()).hasSize(1);
    }
}
