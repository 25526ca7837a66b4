package dev.recount.core.cli;

import dev.recount.core.cli.Converters.InstantConverter;
import java.time.Instant;
import picocli.CommandLine.Option;

/**
 * {@code --from INSTANT --to INSTANT}: a half-open range of time, {@code [from, to)}, as every command that takes one
 * reads it (backfill range and compact, reconcile, advise). The two go together and {@code from} is before {@code to};
 * what the range is of (window starts, record timestamps, lake hours) the command's description says.
 */
public final class RangeOptions {
    @Option(
            names = "--from",
            paramLabel = "INSTANT",
            converter = InstantConverter.class,
            description = "Start of the range (inclusive), ISO-8601 with a zone, e.g. 2026-11-28T00:00:00Z.")
    Instant from;

    @Option(
            names = "--to",
            paramLabel = "INSTANT",
            converter = InstantConverter.class,
            description = "End of the range (exclusive).")
    Instant to;

    /** True when either was given (checked as a pair by {@link #from()} and {@link #to()}). */
    public boolean given() {
        return from != null || to != null;
    }

    /** Fails as a usage error unless both are given and {@code from} is before {@code to}. */
    public RangeOptions require() {
        if (from == null || to == null) {
            throw new UsageException(
                    from == null && to == null
                            ? "give the range: --from INSTANT --to INSTANT"
                            : "--from and --to go together");
        }
        if (!from.isBefore(to)) throw new UsageException("--from " + from + " must be before --to " + to);
        return this;
    }

    public Instant from() {
        require();
        return from;
    }

    public Instant to() {
        require();
        return to;
    }
}
