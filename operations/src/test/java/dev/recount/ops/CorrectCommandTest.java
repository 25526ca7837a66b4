package dev.recount.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.batch.SparkSessions;
import dev.recount.core.cli.ExitCode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** correct's command line: usage errors exit 2 before anything connects (no database behind the URL). */
class CorrectCommandTest {
    private static final OperationsEnvironment ENV = new OperationsEnvironment(
            Map.of("RECOUNT_JDBC_URL", "jdbc:postgresql://127.0.0.1:1/none"),
            Clock.fixed(Instant.parse("2026-11-29T06:00:00Z"), ZoneOffset.UTC),
            SparkSessions.OWNED);

    String out;
    String err;

    int run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int code = OperationsMain.execute(ENV, new PrintWriter(o, true), new PrintWriter(e, true), args);
        out = o.toString();
        err = e.toString();
        return code;
    }

    @Test
    void helpListsItsOwnExitCodes() {
        assertThat(run("correct", "--help")).isEqualTo(ExitCode.OK.code());
        assertThat(out)
                .contains(
                        "--wait",
                        "--max-records",
                        "--report-dir",
                        "Exit codes:",
                        "5   busy: another correct run holds the lock");
    }

    @Test
    void badValuesAreUsageErrors() {
        assertThat(run("correct", "--wait", "soon")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err).startsWith("recount correct: ").contains("soon");
        assertThat(run("correct", "--max-records", "0")).isEqualTo(ExitCode.USAGE.code());
        assertThat(err).contains("--max-records must be at least 1");
        assertThat(run("correct", "--since", "2026-11-01")).isEqualTo(ExitCode.USAGE.code());
    }

    @Test
    void withoutACommandItSaysWhichExist() {
        assertThat(run()).isEqualTo(ExitCode.USAGE.code());
        assertThat(err).contains("missing command: nightly, correct");
    }
}
