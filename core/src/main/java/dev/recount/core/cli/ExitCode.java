package dev.recount.core.cli;

import java.util.Arrays;

/**
 * recount's one table of exit codes: a number means the same in every command, so a scheduler (a CronJob's
 * podFailurePolicy, an alert on a pushed exit code, a shell script) can act on it without knowing which command ran.
 * One number per way a scheduler reacts: done; failed (look at stderr); will never work as given (fix the command or
 * settings); done but alert; retry later; degraded. Each command lists the codes it can exit with, and what each
 * means for it, with {@link ExitsWith}; {@code --help} and docs/contract.md show those lists.
 *
 * <p>The numbers are part of the contract: never renumber one, only add (docs/contract.md, "Changes", keeps the
 * history).
 */
public enum ExitCode {
    OK(0, "success", "success"),
    FAILED(1, "failed", "failed: the reason is the last line on stderr; rerun once it is fixed"),
    USAGE(
            2,
            "usage",
            "bad command line, settings or definitions (unknown option, unreadable value, unknown setting,"
                    + " invalid metric set): nothing was run, and rerunning unchanged cannot help"),
    BEYOND_TOLERANCE(
            3,
            "beyond tolerance",
            "done, but some reconciled key differs beyond its tolerance: alert (the corrections are applied)"),
    REFUSED(
            4,
            "refused",
            "refused, nothing written: what it reads is not ready yet (the stream or the backfill is behind: retry"
                    + " later) or not whole (the reason on stderr says what to do)"),
    BUSY(5, "busy", "another run holds the lock it needs, and waiting for it ran out: nothing was run; retry later"),
    PARTLY(6, "partly", "partly done or partly running: what failed or is down is named on stderr; the rest is fine"),
    NOT_RUNNING(7, "not running", "nothing runs");

    private final int code;
    private final String label;
    private final String meaning;

    ExitCode(int code, String label, String meaning) {
        this.code = code;
        this.label = label;
        this.meaning = meaning;
    }

    /** The process exit status. */
    public int code() {
        return code;
    }

    /** A few words, how a command's own list starts each line: "refused", "beyond tolerance". */
    public String label() {
        return label;
    }

    /** What the code means in every command. */
    public String meaning() {
        return meaning;
    }

    /** True for the codes every command has: success, failed, usage. */
    public boolean isShared() {
        return this == OK || this == FAILED || this == USAGE;
    }

    /** The code of {@code status}; a number outside the table is {@link #FAILED} (a crash the JVM reported). */
    public static ExitCode of(int status) {
        return Arrays.stream(values()).filter(c -> c.code == status).findFirst().orElse(FAILED);
    }
}
