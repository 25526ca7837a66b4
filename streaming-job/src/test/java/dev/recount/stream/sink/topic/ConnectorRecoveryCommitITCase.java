package dev.recount.stream.sink.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.stream.testutils.StreamTestStack;
import dev.recount.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.flink.connector.kafka.sink.internal.FlinkKafkaInternalProducer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Why the side outputs no longer use Flink's KafkaSink, pinned against the real broker (Kafka 4, transaction
 * protocol v2): its recovery re-commits a checkpoint's transaction by producer id and epoch. A transaction that was
 * committed before the crash is then answered "producer fenced" — which the connector logs as possible data loss —
 * although the broker's own view says it is committed and its records are readable. One that was not committed is
 * committed by the recovery. If a connector or broker version changes either answer, this test says so.
 */
class ConnectorRecoveryCommitITCase {
    private final StreamTestStack stack = new StreamTestStack();

    private Properties producerProperties() {
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.stack().bootstrapServers());
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    @Test
    void recommittingACommittedTransactionIsAnsweredFencedAlthoughTheBrokerHasItCommitted() throws Exception {
        String topic = stack.createTopic("recovery", 1);
        String transactionalId = TestNames.unique("recovery-commit");
        try (Admin admin = Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.stack().bootstrapServers()))) {
            FlinkKafkaInternalProducer<byte[], byte[]> writer =
                    new FlinkKafkaInternalProducer<>(producerProperties(), transactionalId);
            writer.initTransactions();
            writer.beginTransaction();
            writer.send(new ProducerRecord<>(topic, "committed".getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
            writer.flush();
            long producerId = writer.getProducerId();
            short epoch = writer.getEpoch();
            writer.commitTransaction(); // before the "crash"

            FlinkKafkaInternalProducer<byte[], byte[]> recovery =
                    new FlinkKafkaInternalProducer<>(producerProperties(), transactionalId);
            recovery.resumeTransaction(producerId, epoch);
            assertThatThrownBy(recovery::commitTransaction).isInstanceOf(ProducerFencedException.class);
            TransactionDescription d = admin.describeTransactions(List.of(transactionalId))
                    .description(transactionalId)
                    .get(30, TimeUnit.SECONDS);
            assertThat(d.state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
            assertThat(stack.readCommitted(topic))
                    .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .containsExactly("committed");
            recovery.close(Duration.ZERO);
            writer.close(Duration.ZERO);
        }
    }

    @Test
    void aTransactionLeftOpenIsCommittedByTheRecovery() throws Exception {
        String topic = stack.createTopic("recovery", 1);
        String transactionalId = TestNames.unique("recovery-open");
        FlinkKafkaInternalProducer<byte[], byte[]> writer =
                new FlinkKafkaInternalProducer<>(producerProperties(), transactionalId);
        writer.initTransactions();
        writer.beginTransaction();
        writer.send(new ProducerRecord<>(topic, "open".getBytes(StandardCharsets.UTF_8)))
                .get(30, TimeUnit.SECONDS);
        writer.flush();

        FlinkKafkaInternalProducer<byte[], byte[]> recovery =
                new FlinkKafkaInternalProducer<>(producerProperties(), transactionalId);
        recovery.resumeTransaction(writer.getProducerId(), writer.getEpoch());
        recovery.commitTransaction();
        assertThat(stack.readCommitted(topic))
                .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("open");
        recovery.close(Duration.ZERO);
        writer.close(Duration.ZERO);
    }
}
