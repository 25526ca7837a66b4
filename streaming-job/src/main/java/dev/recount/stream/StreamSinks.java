package dev.recount.stream;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.stream.sink.SetAttributionRow;
import dev.recount.stream.sink.SetWindowRow;
import dev.recount.stream.source.DeadLetter;
import java.util.Objects;
import org.apache.flink.api.connector.sink2.Sink;

/**
 * The job's outputs; {@link StreamJob#build} takes them as parameters so tests can pass their own.
 *
 * @param windowMetrics where every metric set's window rows go (each names its set)
 * @param lakeLedger    counts what reaches {@code lake} per hour and checkpoint (the same events, chained beside it)
 * @param attribution   where the attribution rows of the sets with attribution go; null when the job runs without
 */
public record StreamSinks(
        Sink<SetWindowRow> windowMetrics,
        Sink<AdEvent> lake,
        Sink<AdEvent> lakeLedger,
        Sink<DeadLetter> deadLetters,
        Sink<BackfillRecord> backfill,
        Sink<SetAttributionRow> attribution) {

    /** Without attribution. */
    public StreamSinks(
            Sink<SetWindowRow> windowMetrics,
            Sink<AdEvent> lake,
            Sink<AdEvent> lakeLedger,
            Sink<DeadLetter> deadLetters,
            Sink<BackfillRecord> backfill) {
        this(windowMetrics, lake, lakeLedger, deadLetters, backfill, null);
    }

    /** The same outputs, with {@code attribution} for attribution rows. */
    public StreamSinks withAttribution(Sink<SetAttributionRow> attribution) {
        return new StreamSinks(
                windowMetrics,
                lake,
                lakeLedger,
                deadLetters,
                backfill,
                Objects.requireNonNull(attribution, "attribution"));
    }

    public StreamSinks {
        Objects.requireNonNull(windowMetrics, "windowMetrics");
        Objects.requireNonNull(lake, "lake");
        Objects.requireNonNull(lakeLedger, "lakeLedger");
        Objects.requireNonNull(deadLetters, "deadLetters");
        Objects.requireNonNull(backfill, "backfill");
    }
}
