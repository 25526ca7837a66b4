package dev.recount.bench;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

final class Topics {
    private Topics() {}

    /** Records in the topic: sum over partitions of (latest - earliest) offset. */
    static long records(String bootstrap, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            int partitions = admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get()
                    .get(topic)
                    .partitions()
                    .size();
            List<TopicPartition> tps = new java.util.ArrayList<>();
            for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
            long latest = admin
                    .listOffsets(tps.stream().collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest())))
                    .all()
                    .get()
                    .values()
                    .stream()
                    .mapToLong(i -> i.offset())
                    .sum();
            long earliest = admin
                    .listOffsets(tps.stream().collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.earliest())))
                    .all()
                    .get()
                    .values()
                    .stream()
                    .mapToLong(i -> i.offset())
                    .sum();
            return latest - earliest;
        }
    }

    public static void main(String[] args) throws Exception {
        System.out.println(records(System.getenv("KAFKA_BOOTSTRAP_SERVERS"), args[0]));
    }
}
