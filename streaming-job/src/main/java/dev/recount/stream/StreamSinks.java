package dev.recount.stream;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.db.tables.StreamWindowMetricsTable;
import dev.recount.stream.source.DeadLetter;
import java.util.Objects;
import org.apache.flink.api.connector.sink2.Sink;

/** The job's four outputs; {@link StreamJob#build} takes them as parameters so tests can pass their own. */
public record StreamSinks(
        Sink<StreamWindowMetricsTable.Row> windowMetrics,
        Sink<AdEvent> lake,
        Sink<DeadLetter> deadLetters,
        Sink<BackfillRecord> backfill) {

    public StreamSinks {
        Objects.requireNonNull(windowMetrics, "windowMetrics");
        Objects.requireNonNull(lake, "lake");
        Objects.requireNonNull(deadLetters, "deadLetters");
        Objects.requireNonNull(backfill, "backfill");
    }
}
