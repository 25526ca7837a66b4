package dev.recount.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MeasureValues;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.stream.StreamJob;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetKeys;
import dev.recount.stream.sink.SetWindowRow;
import dev.recount.stream.window.SetPartial;
import dev.recount.stream.window.WindowMetricsOperator;
import java.io.InputStream;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * SetStateSizes on a snapshot of the job's own window operator (built as the job builds it), holding windows of two
 * metric sets: every window key counted for its set, every byte of the key groups' entries given to a set.
 */
class SetStateSizesTest {
    private static final long W0 = Instant.parse("2026-11-29T00:00:00Z").toEpochMilli();
    private static final long MINUTE = 60_000;
    private static final MetricSets TWO_SETS = MetricSets.parse("""
            version: 1
            attributes:
              slot_id: {type: string, default: none}
            sets:
              - name: default
              - name: campaign_slot
                dimensions: [campaign_id, slot_id]
                measures:
                  - {name: clicks, kind: count, where: {event_type: click}}
                  - {name: spend_micros, kind: sum, field: cost_micros}
                window: 5m
            """, "two sets", RecountConfig.defaults());
    private static final MetricSet DEFAULT = TWO_SETS.set("default").orElseThrow();
    private static final MetricSet CAMPAIGN_SLOT = TWO_SETS.set("campaign_slot").orElseThrow();

    private KeyedOneInputStreamOperatorTestHarness<Tuple2<String, String>, SetPartial, SetWindowRow> harness;

    @AfterEach
    void close() throws Exception {
        if (harness != null) harness.close();
    }

    @Test
    void countsEveryWindowKeyOfEachSetAndGivesEveryEntryByteToItsSet() throws Exception {
        JobSets sets = JobSets.of(TWO_SETS, EventTimeSettings.defaults());
        harness = harness(sets);
        harness.open();
        // default: camp-a x web in 3 windows, camp-b x ios in 1; campaign_slot: camp-a x slot-1 in 2 windows of 5 min.
        for (int w = 0; w < 3; w++) feed(DEFAULT, W0 + w * MINUTE, "camp-a", "web");
        feed(DEFAULT, W0, "camp-b", "ios");
        feed(CAMPAIGN_SLOT, W0, "camp-a", "slot-1");
        feed(CAMPAIGN_SLOT, W0 + 5 * MINUTE, "camp-a", "slot-1");

        OperatorSubtaskState snapshot = harness.snapshot(1, 1);

        Map<String, SetStateSizes.SetState> found = new TreeMap<>();
        long entryBytes = 0;
        long overhead = 0;
        for (KeyedStateHandle handle : snapshot.getManagedKeyedState()) {
            SetStateSizes.readWindowState(handle, getClass().getClassLoader(), found);
            overhead += overheadOf((KeyGroupsStateHandle) handle);
        }
        assertThat(found).containsOnlyKeys("default", "campaign_slot");
        assertThat(found.get("default").windows).isEqualTo(4);
        assertThat(found.get("default").keys).isEqualTo(2);
        assertThat(found.get("campaign_slot").windows).isEqualTo(2);
        assertThat(found.get("campaign_slot").keys).isEqualTo(1);
        for (SetStateSizes.SetState s : found.values()) entryBytes += s.bytes;
        assertThat(entryBytes + overhead).isEqualTo(snapshot.getStateSize());
    }

    private KeyedOneInputStreamOperatorTestHarness<Tuple2<String, String>, SetPartial, SetWindowRow> harness(
            JobSets sets) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<SetPartial> input = env.fromData(SetPartial.TYPE, partial(DEFAULT, W0, "seed", "seed"));
        @SuppressWarnings("unchecked")
        OneInputTransformation<SetPartial, SetWindowRow> window = (OneInputTransformation<SetPartial, SetWindowRow>)
                StreamJob.windowMetrics(input, sets).getTransformation();
        StreamOperatorFactory<SetWindowRow> factory = window.getOperatorFactory();
        return new KeyedOneInputStreamOperatorTestHarness<>(
                factory, WindowMetricsOperator.keySelector(sets), SetKeys.WINDOW_KEY);
    }

    private void feed(MetricSet set, long windowStart, String... dimensions) throws Exception {
        harness.processElement(new StreamRecord<>(partial(set, windowStart, dimensions), windowStart));
    }

    private static SetPartial partial(MetricSet set, long windowStart, String... dimensions) {
        long[] ones = new long[set.measures().size()];
        java.util.Arrays.fill(ones, 1);
        return new SetPartial(set.name(), windowStart, dimensions, set.sumsOf(MeasureValues.of(ones)), null);
    }

    /**
     * What a heap snapshot holds besides its entries: the header (key serializer and states), then per key group its
     * id (an int) and per state its id (a short) and entry count (an int).
     */
    private static long overheadOf(KeyGroupsStateHandle handle) throws Exception {
        byte[] bytes;
        try (InputStream in = handle.getDelegateStateHandle().openInputStream()) {
            bytes = in.readAllBytes();
        }
        DataInputDeserializer view = new DataInputDeserializer(bytes);
        KeyedBackendSerializationProxy<Object> proxy =
                new KeyedBackendSerializationProxy<>(SetStateSizesTest.class.getClassLoader());
        proxy.read(view);
        int states = proxy.getStateMetaInfoSnapshots().size();
        return view.getPosition() + (long) handle.getKeyGroupRange().getNumberOfKeyGroups() * (4 + states * (2 + 4));
    }
}
