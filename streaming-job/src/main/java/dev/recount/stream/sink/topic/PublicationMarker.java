package dev.recount.stream.sink.topic;

import java.util.Objects;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;

/**
 * How far a publisher got: the last batch it published, stored as a consumer-group offset that is committed
 * inside the same Kafka transaction as the batch's records (offset = sequence, metadata = lineage). The broker
 * makes both visible together or neither, so after any crash the marker says exactly which batches are on the
 * topic.
 */
public record PublicationMarker(String lineage, long sequence) {
    public static final PublicationMarker NONE = new PublicationMarker("", 0);

    public PublicationMarker {
        Objects.requireNonNull(lineage, "lineage");
    }

    static PublicationMarker of(OffsetAndMetadata committed) {
        if (committed == null) return NONE;
        return new PublicationMarker(committed.metadata() == null ? "" : committed.metadata(), committed.offset());
    }

    OffsetAndMetadata toOffset() {
        return new OffsetAndMetadata(sequence, lineage);
    }

    /** Whether {@code batch} was published already: same lineage, and not after this marker. */
    public boolean covers(TopicBatch batch) {
        return lineage.equals(batch.lineage()) && batch.sequence() <= sequence;
    }
}
