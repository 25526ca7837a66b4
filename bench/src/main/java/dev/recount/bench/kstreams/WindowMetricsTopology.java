package dev.recount.bench.kstreams;

import dev.recount.bench.DefaultSet;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.event.EventValidator;
import dev.recount.core.sets.MeasureSums;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.state.Stores;

/**
 * The window metrics as a Kafka Streams user would write them for recount's answer: validate (core's
 * EventValidator), repartition by event_id, drop repeated ids (a key-value store of the ids seen, forgotten after
 * the de-dup horizon), repartition by (campaign, channel), tumbling event-time windows with a grace period, the default set's
 * running sums (core's MetricSet.add) as the aggregate, and each window result upserted into PostgreSQL by {@code sink}.
 *
 * <p>Stores are in memory (changelogged to Kafka, so they are restored after a failure), the counterpart of the
 * heap state the Flink jobs keep. The window store keeps Kafka Streams' record cache (on by default): results reach
 * the sink on commit or cache eviction, one per window key and flush, not one per event.
 */
public final class WindowMetricsTopology {
    private WindowMetricsTopology() {}

    /**
     * @param grace how long after a window's end (in stream time, the largest event time seen) it still takes events;
     *              recount's equivalent is out-of-orderness + allowed lateness, as its watermark trails the largest
     *              event time by the out-of-orderness
     */
    public static Topology build(
            String inputTopic,
            EventTimeSettings time,
            Duration grace,
            RunProgress progress,
            ProcessorSupplier<Windowed<String>, MeasureSums, Void, Void> sink) {
        EventValidator validator = new EventValidator(time.validation());
        Duration window = time.windowSize();
        Duration horizon = dedupHorizon(time, grace);
        StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(Stores.keyValueStoreBuilder(
                        Stores.inMemoryKeyValueStore(DropDuplicateIds.STORE), Serdes.String(), Serdes.Long())
                .withCachingDisabled()); // every id is new but for the few duplicates: a cache would only add a copy

        builder.stream(
                        inputTopic,
                        Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("kafka-source"))
                .process(() -> new ValidateEvents(validator, progress), Named.as("validate"))
                .repartition(Repartitioned.with(Serdes.String(), BinarySerdes.events())
                        .withName("by-event-id"))
                .process(
                        () -> new DropDuplicateIds(horizon, progress),
                        Named.as("drop-duplicate-ids"),
                        DropDuplicateIds.STORE)
                .selectKey((eventId, event) -> CampaignChannel.of(event), Named.as("key-by-campaign-channel"))
                .repartition(Repartitioned.with(Serdes.String(), BinarySerdes.events())
                        .withName("by-campaign-channel"))
                .peek((key, event) -> progress.aggregated.increment(), Named.as("count-aggregated"))
                .groupByKey(Grouped.with(Serdes.String(), BinarySerdes.events()))
                .windowedBy(TimeWindows.ofSizeAndGrace(window, grace))
                .aggregate(
                        DefaultSet.SET::newSums,
                        (key, event, acc) -> DefaultSet.SET.add(acc, event),
                        Named.as("window-metrics"),
                        Materialized.<String, MeasureSums>as(
                                        Stores.inMemoryWindowStore("window-metrics", window.plus(grace), window, false))
                                .withKeySerde(Serdes.String())
                                .withValueSerde(BinarySerdes.accumulators()))
                .toStream(Named.as("window-results"))
                .process(sink, Named.as("postgres-upsert"));
        return builder.build();
    }

    /**
     * recount's de-dup horizon, or window + grace if that is longer: as in recount, an id must be remembered as long
     * as a copy of it could still land in an open window.
     */
    public static Duration dedupHorizon(EventTimeSettings time, Duration grace) {
        Duration needed = time.windowSize().plus(grace);
        return needed.compareTo(time.dedupHorizon()) > 0 ? needed : time.dedupHorizon();
    }
}
