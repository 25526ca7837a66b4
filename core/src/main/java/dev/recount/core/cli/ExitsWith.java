package dev.recount.core.cli;

import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A code of {@link ExitCode} a command can exit with, and when it does, on the command's class. Every command has
 * {@link ExitCode#OK}, {@link ExitCode#FAILED} and {@link ExitCode#USAGE}; annotate those only to say more. A command
 * without any has its parent command's list. {@link RecountCli} prints the list in {@code --help} ("Exit codes:"),
 * {@link CommandTree} gives it to the test that holds docs/contract.md to the code.
 *
 * <pre>{@code
 * @ExitsWith(code = ExitCode.REFUSED, when = "the range reaches beyond the lake's completeness boundary")
 * @ExitsWith(code = ExitCode.BUSY, when = "an overlapping backfill held its lock longer than batch.lock-timeout")
 * }</pre>
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Repeatable(ExitsWith.List.class)
public @interface ExitsWith {
    ExitCode code();

    /** When this command exits with it, in its own terms. */
    String when();

    /** The container of repeated {@link ExitsWith}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    @interface List {
        ExitsWith[] value();
    }
}
