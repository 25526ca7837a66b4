package dev.recount.stream.sink.topic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.stream.testutils.StreamTestStack;
import dev.recount.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The publication protocol against a real broker: a batch is on the topic exactly once whatever happened to the
 * committer that published it — committed twice (a restart after the commit), or killed in the middle of its
 * transaction (a restart during the commit) — and a new lineage starts its own count.
 */
class TopicPublicationITCase {
    private final StreamTestStack stack = new StreamTestStack();

    private static TopicRecord record(String value) {
        return new TopicRecord("key".getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8));
    }

    private TopicBatchCommitter committer(String topic, String publicationId) {
        return new TopicBatchCommitter(
                stack.stack().bootstrapServers(),
                topic,
                publicationId,
                new Properties(),
                new UnregisteredMetricsGroup());
    }

    private List<String> values(String topic) {
        return stack.readCommitted(topic).stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8))
                .toList();
    }

    @Test
    void aBatchCommittedAgainAfterARestartIsNotPublishedTwice() {
        String topic = stack.createTopic("pub", 3);
        String id = TestNames.unique("pub");
        TopicBatch first = new TopicBatch("L", 1, List.of(record("a"), record("b")));
        TopicBatch second = new TopicBatch("L", 2, List.of(record("c")));

        try (TopicBatchCommitter c = committer(topic, id)) {
            assertThat(commit(c, first)).isEmpty();
        }
        try (TopicBatchCommitter restarted = committer(topic, id)) {
            // After a restore Flink commits the restored checkpoint's batches again, then the new ones.
            assertThat(commit(restarted, first, second)).isEmpty();
        }
        assertThat(values(topic)).containsExactlyInAnyOrder("a", "b", "c");
    }

    @Test
    void aCommitterKilledInTheMiddleOfItsTransactionLeavesNothingAndTheNextPublishesOnce() {
        String topic = stack.createTopic("pub", 3);
        String id = TestNames.unique("pub");
        TopicBatch batch = new TopicBatch("L", 1, List.of(record("x"), record("y")));

        // What a killed committer leaves: a transaction with the records and the marker, never ended.
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.stack().bootstrapServers());
        p.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        KafkaProducer<byte[], byte[]> zombie = new KafkaProducer<>(p);
        zombie.initTransactions();
        zombie.beginTransaction();
        zombie.send(new ProducerRecord<>(topic, "x".getBytes(StandardCharsets.UTF_8)));
        zombie.send(new ProducerRecord<>(topic, "y".getBytes(StandardCharsets.UTF_8)));
        try (KafkaConsumer<byte[], byte[]> groupOwner = markerConsumer(id)) {
            zombie.sendOffsetsToTransaction(
                    Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(1, "L")), groupOwner.groupMetadata());
        }
        zombie.flush();

        try (TopicBatchCommitter next = committer(topic, id)) {
            assertThat(commit(next, batch)).isEmpty();
        }
        assertThat(values(topic)).containsExactlyInAnyOrder("x", "y");
        zombie.close(java.time.Duration.ZERO);
    }

    @Test
    void aNewLineageIsPublishedFromItsFirstBatchWhateverTheOldMarkerSays() {
        String topic = stack.createTopic("pub", 1);
        String id = TestNames.unique("pub");
        try (TopicBatchCommitter c = committer(topic, id)) {
            commit(c, new TopicBatch("old", 1, List.of(record("o1"))), new TopicBatch("old", 2, List.of(record("o2"))));
            // --from-earliest: the new run numbers its batches from 1 again.
            commit(c, new TopicBatch("new", 1, List.of(record("n1"))));
        }
        try (TopicBatchCommitter restarted = committer(topic, id)) {
            commit(
                    restarted,
                    new TopicBatch("new", 1, List.of(record("n1"))),
                    new TopicBatch("new", 2, List.of(record("n2"))));
        }
        assertThat(values(topic)).containsExactly("o1", "o2", "n1", "n2");
    }

    private KafkaConsumer<byte[], byte[]> markerConsumer(String publicationId) {
        Properties c = new Properties();
        c.setProperty(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.stack().bootstrapServers());
        c.setProperty(ConsumerConfig.GROUP_ID_CONFIG, TopicBatchCommitter.markerGroup(publicationId));
        c.setProperty(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.setProperty(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(c);
    }

    /** Commits the batches as Flink's committer operator would; returns the failures it signalled. */
    private static List<Throwable> commit(TopicBatchCommitter committer, TopicBatch... batches) {
        List<Throwable> failures = new ArrayList<>();
        List<Committer.CommitRequest<TopicBatch>> requests = new ArrayList<>();
        for (TopicBatch b : batches) requests.add(new Request(b, failures));
        committer.commit((Collection<Committer.CommitRequest<TopicBatch>>) requests);
        return failures;
    }

    private record Request(TopicBatch batch, List<Throwable> failures) implements Committer.CommitRequest<TopicBatch> {
        @Override
        public TopicBatch getCommittable() {
            return batch;
        }

        @Override
        public int getNumberOfRetries() {
            return 0;
        }

        @Override
        public void signalFailedWithKnownReason(Throwable t) {
            failures.add(t);
        }

        @Override
        public void signalFailedWithUnknownReason(Throwable t) {
            failures.add(t);
        }

        @Override
        public void retryLater() {
            failures.add(new IllegalStateException("retry later"));
        }

        @Override
        public void updateAndRetryLater(TopicBatch committable) {
            failures.add(new IllegalStateException("retry later"));
        }

        @Override
        public void signalAlreadyCommitted() {}
    }
}
