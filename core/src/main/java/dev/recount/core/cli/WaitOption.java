package dev.recount.core.cli;

import dev.recount.core.cli.Converters.DurationConverter;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * {@code --wait DURATION}: how long a command waits for something before it gives up (a lock, services to answer,
 * a backfill to succeed). The command says what and the default with {@link WaitsFor}.
 */
public final class WaitOption {
    @Option(
            names = "--wait",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "How long to wait (completed from the command's @WaitsFor).")
    Duration wait;

    /** The duration given, else the command's {@link WaitsFor#byDefault()}. */
    public Duration duration() {
        if (wait == null) throw new IllegalStateException("--wait has no value: the command lacks @WaitsFor");
        if (wait.isNegative()) throw new UsageException("--wait must not be negative, got " + wait);
        return wait;
    }
}
