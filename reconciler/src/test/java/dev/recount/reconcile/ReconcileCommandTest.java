package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Usage errors are caught before anything connects: exit 2 with a one-line reason. */
class ReconcileCommandTest {
    String out;
    String err;

    int run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        // No database behind this URL: a usage error must be reported before any connection is tried.
        int code = ReconcileMain.execute(
                new CommandEnvironment(
                        Map.of("RECOUNT_JDBC_URL", "jdbc:postgresql://127.0.0.1:1/none"),
                        Clock.fixed(Instant.parse("2026-11-29T00:00:00Z"), ZoneOffset.UTC)),
                new PrintWriter(o),
                new PrintWriter(e),
                args);
        out = o.toString();
        err = e.toString();
        return code;
    }

    @Test
    void helpListsTheExitCodes() {
        assertThat(run("--help")).isZero();
        assertThat(out)
                .contains("--from", "--to", "--date", "--batch-run", "--report-dir", "--dry-run", "--config")
                .contains("abandoned")
                .contains("Exit codes:")
                .contains("3   reconciled and corrected, but some key is beyond tolerance");
        assertThat(run("nightly-dates", "--help")).isZero();
        assertThat(out).contains("--since", "--until");
    }

    @Test
    void rejectsAMissingOrAmbiguousScope() {
        assertThat(run()).isEqualTo(ExitCodes.USAGE);
        assertThat(err.strip())
                .isEqualTo("recount reconcile: give the range to reconcile: --from T --to T, --date D or --batch-run ID"
                        + " (see recount reconcile --help)");
        assertThat(run("--date", "2026-11-28", "--batch-run", "3")).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("only one of");
        assertThat(run("--from", "2026-11-28T00:00:00Z")).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("--from and --to go together");
    }

    @Test
    void rejectsBadValuesInOneLine() {
        assertThat(run("--from", "yesterday", "--to", "2026-11-28T00:00:00Z")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.strip()).contains("cannot read instant 'yesterday'").doesNotContain("\n");
        assertThat(run("--from", "2026-11-28T00:00:00Z", "--to", "2026-11-27T00:00:00Z"))
                .isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("must be after --from");
        assertThat(run("--date", "28.11.2026")).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("cannot read date");
        assertThat(run("--batch-run", "x")).isEqualTo(ExitCodes.USAGE);
        assertThat(run("nightly-dates", "--since", "29.11.2026")).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("cannot read date");
    }

    /** A definitions file that breaks a rule is a usage error before anything connects, naming file and line. */
    @Test
    void aBadDefinitionsFileIsRefusedBeforeConnecting(@TempDir Path dir) throws Exception {
        Path sets = dir.resolve("sets.yaml");
        Files.writeString(
                sets,
                String.join(
                        "\n",
                        "version: 1",
                        "sets:",
                        "  - name: by_channel",
                        "    dimensions: [channel_id]",
                        "    measures:",
                        "      - {name: spend, kind: sum, field: campaign_id}",
                        ""));
        Path config = dir.resolve("recount.properties");
        Files.writeString(config, "metric-sets.file=" + sets + "\n");
        assertThat(run("--config", config.toString(), "--date", "2026-11-28")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.strip()).contains(sets + ":6").contains("campaign_id").doesNotContain("\n");
    }

    @Test
    void pendingRejectsBadOptionsBeforeConnecting() {
        assertThat(run("pending", "--help")).isZero();
        assertThat(out).contains("--days", "--wait-for-backfill", "--report-dir", "4   some day still without");
        assertThat(run("pending", "--days", "0")).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("--days must be at least 1");
        assertThat(run("pending", "--wait-for-backfill", "soon")).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("soon");
        assertThat(run("pending", "--days", "x")).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void nightlyDatesWithoutSinceIsYesterdayInTheConfiguredZone() {
        // What a plain `./recount nightly` reruns; no database needed. The fixed clock is 2026-11-29T00:00Z.
        assertThat(run("nightly-dates")).isZero();
        assertThat(out.strip()).isEqualTo("2026-11-28");
    }

    @Test
    void rejectsABadConfigFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path cfg = dir.resolve("bad.properties");
        java.nio.file.Files.writeString(cfg, "reconcile.tolerance.clicks.relative=lots\n");
        assertThat(run("--date", "2026-11-28", "--config", cfg.toString())).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("reconcile.tolerance.clicks.relative must be a decimal number");
        java.nio.file.Files.writeString(cfg, "reconcile.tolerance.clicks.absolute=-1\n");
        assertThat(run("--date", "2026-11-28", "--config", cfg.toString())).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("absolute tolerance must be >= 0");
        java.nio.file.Files.writeString(cfg, "reconcile.tolerance.typo=1\n");
        assertThat(run("--date", "2026-11-28", "--config", cfg.toString())).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("unknown setting 'reconcile.tolerance.typo'");
        java.nio.file.Files.writeString(cfg, "reconcile.work-mem=512MB'; DROP TABLE x; --\n");
        assertThat(run("--date", "2026-11-28", "--config", cfg.toString())).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("reconcile.work-mem must be a size like 512MB");
    }
}
