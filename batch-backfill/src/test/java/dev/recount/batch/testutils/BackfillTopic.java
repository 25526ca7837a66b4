package dev.recount.batch.testutils;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.event.EventType;
import dev.recount.core.window.WindowAlignment;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** The backfill topic of one test on the shared broker: create it, put too-late records on it, read the group's offsets. */
public final class BackfillTopic {
    private static final WindowAlignment MINUTE = new WindowAlignment(60_000);

    private final String bootstrap;
    private final String topic;
    private final String group;
    private final int partitions;

    public BackfillTopic(BatchStack t, int partitions) throws ExecutionException, InterruptedException {
        this.bootstrap = t.stack.bootstrapServers();
        this.topic = t.backfillTopic;
        this.group = t.group;
        this.partitions = partitions;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                    .all()
                    .get();
        }
    }

    /** Sets the group's committed offset of {@code partition}, as an administrator can. */
    public void commit(int partition, long offset) throws ExecutionException, InterruptedException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.alterConsumerGroupOffsets(
                            group, Map.of(new TopicPartition(topic, partition), new OffsetAndMetadata(offset)))
                    .all()
                    .get();
        }
    }

    /** Deletes the topic and creates it again with as many partitions, empty (Kafka forgets the group's offsets). */
    public void recreate() throws ExecutionException, InterruptedException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.deleteTopics(List.of(topic)).all().get();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (true) {
                // Deletion completes in the background: creating too early fails with TopicExistsException.
                try {
                    admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                            .all()
                            .get();
                    return;
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)
                            || System.nanoTime() > deadline) throw e;
                    Thread.onSpinWait();
                }
            }
        }
    }

    /** Sends the backfill record the stream job would write for a too-late event of {@code sets}. */
    public void send(int partition, LakeEvent tooLate, List<BackfillRecord.SetWindow> sets)
            throws ExecutionException, InterruptedException {
        sendRaw(partition, recordFor(tooLate, sets));
    }

    /** Sends, in order, the backfill records the stream job would write for these too-late events. */
    public void send(int partition, LakeEvent... tooLate) throws ExecutionException, InterruptedException {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (LakeEvent e : tooLate) {
                producer.send(new ProducerRecord<>(topic, partition, e.campaignId(), recordFor(e)))
                        .get();
            }
        }
    }

    /**
     * A consumer that has joined the group as an active member (subscribed and assigned). While it is open the broker
     * refuses the offset commits of a consumer outside the group's generation, as `backfill affected`'s is: its
     * commit fails after its results are committed, as if it had died in between.
     */
    public KafkaConsumer<byte[], byte[]> joinedMember() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        KafkaConsumer<byte[], byte[]> member = new KafkaConsumer<>(p);
        member.subscribe(List.of(topic));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (member.assignment().isEmpty()) {
            if (System.nanoTime() > deadline) {
                member.close();
                throw new IllegalStateException("the member was not assigned within 60 s");
            }
            member.poll(Duration.ofMillis(100));
        }
        return member;
    }

    /** Sends a value that is not a backfill record. */
    public void sendRaw(int partition, String value) throws ExecutionException, InterruptedException {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.send(new ProducerRecord<>(topic, partition, null, value)).get();
        }
    }

    /** Sends bytes that are not a backfill record, and perhaps not text. */
    public void sendRawBytes(int partition, byte[] value) throws ExecutionException, InterruptedException {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.send(new ProducerRecord<>(topic, partition, null, value)).get();
        }
    }

    /** Deletes a partition's records before {@code offset}, as the topic's retention would. */
    public void deleteRecordsBefore(int partition, long offset) throws ExecutionException, InterruptedException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.deleteRecords(Map.of(
                            new TopicPartition(topic, partition),
                            org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(offset)))
                    .all()
                    .get();
        }
    }

    /** The consumer group's committed offset per partition of this topic (partitions without one are absent). */
    public Map<Integer, Long> committed() throws ExecutionException, InterruptedException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata()
                    .get();
            Map<Integer, Long> out = new TreeMap<>();
            offsets.forEach((tp, o) -> {
                if (tp.topic().equals(topic) && o != null) out.put(tp.partition(), o.offset());
            });
            return out;
        }
    }

    /** The record the stream job would write for a too-late event of the default set (1-minute windows). */
    public static String recordFor(LakeEvent e) {
        long start = MINUTE.windowStart(e.eventTs());
        return recordFor(e, List.of(new BackfillRecord.SetWindow("default", start, start + MINUTE.sizeMillis())));
    }

    /** The record the stream job would write for a too-late event of {@code sets}, each with its window. */
    public static String recordFor(LakeEvent e, List<BackfillRecord.SetWindow> sets) {
        AdEvent event = new AdEvent(
                e.eventId(),
                EventType.fromWire(e.eventType()).orElseThrow(),
                e.eventTs(),
                e.campaignId(),
                e.channelId(),
                e.costMicros(),
                e.requestId(),
                e.topic(),
                e.partition(),
                e.offset(),
                e.recordTs());
        event.attributesJson = e.attributes();
        return new BackfillRecord(event, sets, e.recordTs() - 30_000, e.topic(), e.partition(), e.offset()).toJson();
    }
}
