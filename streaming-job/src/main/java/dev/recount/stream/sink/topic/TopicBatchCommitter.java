package dev.recount.stream.sink.topic;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes each {@link TopicBatch} of a completed checkpoint exactly once, through a {@link TransactionalPublisher}:
 * a batch the marker covers was published before a failure and is skipped; any other is published together with
 * the marker's move to it. Nothing depends on how long the job was down: the records wait in the checkpoint, and
 * no transaction stays open between checkpoints.
 *
 * <p>Failures (broker unreachable, timeouts) fail the job, which restarts from the last checkpoint and tries again
 * with a fresh producer: the batches are still in the committer's state.
 */
final class TopicBatchCommitter implements Committer<TopicBatch>, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TopicBatchCommitter.class);
    public static final String PUBLISHED_BATCHES_METRIC = "batchesPublished";
    public static final String PUBLISHED_RECORDS_METRIC = "recordsPublished";
    public static final String SKIPPED_BATCHES_METRIC = "batchesAlreadyPublished";

    private final String topic;
    private final String publicationId;
    private final TransactionalPublisher publisher;
    private final Counter batchesPublished;
    private final Counter recordsPublished;
    private final Counter batchesSkipped;

    TopicBatchCommitter(
            String bootstrapServers,
            String topic,
            String publicationId,
            Properties producerOverrides,
            MetricGroup metrics) {
        this.topic = topic;
        this.publicationId = publicationId;
        this.publisher = new TransactionalPublisher(
                bootstrapServers, topic, publicationId, markerGroup(publicationId), producerOverrides);
        this.batchesPublished = metrics.counter(PUBLISHED_BATCHES_METRIC);
        this.recordsPublished = metrics.counter(PUBLISHED_RECORDS_METRIC);
        this.batchesSkipped = metrics.counter(SKIPPED_BATCHES_METRIC);
    }

    /** The consumer group whose offset on partition 0 of the topic is the marker. */
    static String markerGroup(String publicationId) {
        return publicationId + ".published";
    }

    @Override
    public void commit(Collection<CommitRequest<TopicBatch>> requests) {
        List<CommitRequest<TopicBatch>> ordered = new ArrayList<>(requests);
        ordered.sort(Comparator.comparingLong(r -> r.getCommittable().sequence()));
        for (CommitRequest<TopicBatch> request : ordered) {
            TopicBatch batch = request.getCommittable();
            try {
                PublicationMarker marker = publisher.marker();
                if (marker.covers(batch)) {
                    LOG.info("{} was published to {} before a restart (marker {}); not again", batch, topic, marker);
                    batchesSkipped.inc();
                    continue;
                }
                publisher.publish(batch.records(), new PublicationMarker(batch.lineage(), batch.sequence()));
                batchesPublished.inc();
                recordsPublished.inc(batch.records().size());
            } catch (ProducerFencedException e) {
                request.signalFailedWithUnknownReason(new IllegalStateException(
                        "another publisher took over " + "transactional id '" + publicationId
                                + "' (a second job on the same schema and topics?)",
                        e));
            } catch (RuntimeException e) {
                // Broker away, timeouts, ...: the job restarts from the checkpoint and publishes again.
                request.signalFailedWithUnknownReason(e);
            }
        }
    }

    @Override
    public void close() {
        publisher.close();
    }
}
