package dev.recount.stack.embedded;

import dev.recount.core.config.Topics;
import dev.recount.core.time.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;

/** Creates recount's three topics (CONTRACT §1, §3) when they are missing; existing ones are left as they are. */
final class TopicSetup {
    private TopicSetup() {}

    /** @return every topic with its partition count, in the order input, dead-letter, backfill */
    static Map<String, Integer> ensure(String bootstrapServers, Topics topics, Duration timeout) {
        List<String> names = List.of(topics.input(), topics.deadLetter(), topics.backfill());
        AtomicReference<ExecutionException> last = new AtomicReference<>();
        try (Admin admin = KafkaBroker.admin(bootstrapServers, Duration.ofSeconds(10))) {
            Optional<Map<String, Integer>> created = Wait.upTo(timeout)
                    .every(Duration.ofMillis(200))
                    .untilPresent(() -> {
                        try {
                            return Optional.of(createMissing(admin, names, topics.inputPartitions()));
                        } catch (ExecutionException e) {
                            // A broker that has just started may not be registered yet ("0 brokers available").
                            boolean transientError = e.getCause() instanceof RetriableException
                                    || e.getCause() instanceof InvalidReplicationFactorException;
                            if (!transientError) throw cannotCreate(names, e);
                            last.set(e);
                            return Optional.<Map<String, Integer>>empty();
                        } catch (TimeoutException e) {
                            throw new StackException("Kafka did not answer while creating topics " + names, e);
                        }
                    });
            return created.orElseThrow(() -> cannotCreate(names, last.get()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StackException("interrupted while creating topics", e);
        }
    }

    private static StackException cannotCreate(List<String> names, ExecutionException e) {
        return new StackException(
                "cannot create topics " + names + ": " + e.getCause().getMessage(), e);
    }

    private static Map<String, Integer> createMissing(Admin admin, List<String> names, int partitions)
            throws ExecutionException, InterruptedException, TimeoutException {
        Set<String> existing = admin.listTopics().names().get(15, TimeUnit.SECONDS);
        List<NewTopic> missing = new ArrayList<>();
        for (String name : names) {
            if (!existing.contains(name)) missing.add(new NewTopic(name, partitions, (short) 1));
        }
        if (!missing.isEmpty()) {
            for (var result : admin.createTopics(missing).values().values()) {
                try {
                    result.get(15, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) throw e; // a concurrent creator won
                }
            }
        }
        Map<String, TopicDescription> described =
                admin.describeTopics(names).allTopicNames().get(15, TimeUnit.SECONDS);
        Map<String, Integer> result = new LinkedHashMap<>();
        for (String name : names)
            result.put(name, described.get(name).partitions().size());
        return result;
    }
}
