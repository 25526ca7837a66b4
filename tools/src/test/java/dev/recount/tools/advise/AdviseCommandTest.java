package dev.recount.tools.advise;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.tools.ToolsMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code advise} on the real command line (ToolsMain's error handling), without Kafka: help and bad arguments. */
class AdviseCommandTest {

    record Run(int exitCode, String out, String err) {
        boolean errIsOneLine() {
            return !err.isBlank() && err.strip().lines().count() == 1;
        }
    }

    static Run run(String... args) {
        CommandLine cl = ToolsMain.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = cl.setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void helpNamesEveryOption() {
        Run r = run("advise", "--help");

        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains(
                        "--from",
                        "--to",
                        "--topic",
                        "--config",
                        "--bootstrap-servers",
                        "--max-records",
                        "out-of-orderness",
                        "allowed-lateness",
                        "idleness");
    }

    @Test
    void anEmptyOrReversedRangeIsAUsageErrorOnOneLine() {
        Run r = run("advise", "--from", "2026-11-29T00:00:00Z", "--to", "2026-11-28T00:00:00Z");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.errIsOneLine()).as(r.err()).isTrue();
        assertThat(r.err()).contains("--from 2026-11-29T00:00:00Z must be before --to 2026-11-28T00:00:00Z");
    }

    @Test
    void anUnreadableInstantIsNamed() {
        Run r = run("advise", "--from", "yesterday", "--to", "2026-11-28T00:00:00Z");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.errIsOneLine()).as(r.err()).isTrue();
        assertThat(r.err()).contains("--from").contains("cannot read instant 'yesterday'");
    }

    @Test
    void theRangeIsRequired() {
        Run r = run("advise", "--from", "2026-11-28T00:00:00Z");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.errIsOneLine()).as(r.err()).isTrue();
        assertThat(r.err()).contains("--to");
    }

    @Test
    void maxRecordsMustBePositive() {
        Run r = run("advise", "--from", "2026-11-28T00:00:00Z", "--to", "2026-11-29T00:00:00Z", "--max-records", "0");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--max-records must be >= 1");
    }
}
