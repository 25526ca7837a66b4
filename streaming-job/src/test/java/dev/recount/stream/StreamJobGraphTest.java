package dev.recount.stream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.event.EventValidator;
import dev.recount.stream.attribution.EventInSets;
import dev.recount.stream.run.StreamRun;
import dev.recount.stream.run.StreamSettings;
import dev.recount.stream.sink.SetWindowRow;
import dev.recount.stream.source.KafkaInput;
import dev.recount.stream.types.AdEventSerializer;
import dev.recount.stream.types.BackfillRecordSerializer;
import dev.recount.stream.window.SetPartial;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.junit.jupiter.api.Test;

/**
 * The whole job as `stream` builds it, without running it: every type has a Flink serializer (Kryo is switched off,
 * so a generic type fails the graph), and every stage has its name and uid.
 */
class StreamJobGraphTest {

    /** The types the DataStream API declares by class (the others have hand-written serializers, see below). */
    @Test
    void everyRecordTypeDeclaredByClassIsAFlinkPojo() {
        for (Class<?> type : List.of(
                dev.recount.core.event.AdEvent.class,
                dev.recount.stream.source.ParsedRecord.class,
                dev.recount.stream.source.DeadLetter.class,
                dev.recount.stream.attribution.AttributionDelta.class,
                dev.recount.core.attribution.AttributionAccumulator.class)) {
            assertThat(TypeInformation.of(type)).as(type.getName()).isInstanceOf(PojoTypeInfo.class);
        }
    }

    @Test
    void buildsWithoutGenericTypesAndWithStableUids() {
        StreamSettings settings = StreamSettings.from(RecountConfig.load(null, Map.of()));
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        KafkaInput input = new KafkaInput(
                "localhost:9",
                "ad-events",
                "g",
                new EventValidator(settings.eventTime().validation()),
                Map.of(),
                null);

        StreamJob.build(
                env,
                input.source(),
                StreamRun.sinks(settings, "graph-test"),
                settings.eventTime(),
                settings.sets(),
                Long.MIN_VALUE);
        StreamGraph graph = env.getStreamGraph();

        List<String> uids = graph.getStreamNodes().stream()
                .map(StreamNode::getTransformationUID)
                .filter(uid -> uid != null)
                .collect(Collectors.toList());
        assertThat(uids)
                .contains(
                        StreamJob.SOURCE,
                        StreamJob.VALIDATE,
                        StreamJob.DEDUP_UID,
                        StreamJob.WINDOW_UID,
                        StreamJob.LATE_AT_WINDOW);
        assertThat(String.join(",", uids))
                .contains(
                        StreamJob.DEAD_LETTER_SINK_UID,
                        StreamJob.LAKE_SINK,
                        StreamJob.BACKFILL_SINK_UID,
                        StreamJob.WINDOW_METRICS_SINK);
        assertThat(graph.getStreamNodes())
                .allSatisfy(n -> assertThat(n.getTransformationUID())
                        .as("uid of %s", n.getOperatorName())
                        .isNotNull());
        assertThat(String.join(",", uids))
                .as("attribution is off by default: the job is the one without it")
                .doesNotContain(StreamJob.ATTRIBUTION_JOIN)
                .doesNotContain(StreamJob.ATTRIBUTION_WINDOWS)
                .doesNotContain(StreamJob.ATTRIBUTION_SINK);
    }

    /**
     * Events cross the shuffles (to the de-dup and to the lake) with the hand-written serializer, and so do the
     * partial sums, the events for attribution with their sets, the backfill records and the rows; the type that state
     * declares with {@code TypeInformation.of} stays the POJO its checkpoints were written with.
     */
    @Test
    void recordsTravelWithTheHandWrittenSerializersAndStateKeepsThePojoOne() {
        StreamGraph graph = graph(true);
        StreamNode validate = node(graph, StreamJob.VALIDATE);
        StreamNode dedup = node(graph, StreamJob.DEDUP_UID);
        StreamNode lake = graph.getStreamNodes().stream()
                .filter(n -> n.getOperatorName().startsWith(StreamJob.LAKE_SINK))
                .findFirst()
                .orElseThrow();
        StreamNode join = node(graph, StreamJob.ATTRIBUTION_JOIN);
        StreamNode window = node(graph, StreamJob.WINDOW_UID);
        StreamNode backfill = graph.getStreamNodes().stream()
                .filter(n -> n.getOperatorName().startsWith(StreamJob.BACKFILL_SINK))
                .findFirst()
                .orElseThrow();
        assertThat(validate.getTypeSerializerOut()).isInstanceOf(AdEventSerializer.class);
        assertThat(dedup.getTypeSerializersIn()[0]).isInstanceOf(AdEventSerializer.class);
        assertThat(lake.getTypeSerializersIn()[0]).isInstanceOf(AdEventSerializer.class);
        assertThat(join.getTypeSerializersIn()[0]).isInstanceOf(EventInSets.Serializer.class);
        assertThat(window.getTypeSerializersIn()[0]).isInstanceOf(SetPartial.Serializer.class);
        assertThat(window.getTypeSerializerOut()).isInstanceOf(SetWindowRow.Serializer.class);
        assertThat(backfill.getTypeSerializersIn()[0]).isInstanceOf(BackfillRecordSerializer.class);
        assertThat(TypeInformation.of(dev.recount.core.event.AdEvent.class)).isInstanceOf(PojoTypeInfo.class);
    }

    /**
     * The lake's ledger counts exactly the events the lake writer gets between two checkpoints only because both are
     * chained to the de-dup operator's output: one task, one thread, the same barrier. A shuffle or a different
     * parallelism in between would make the counts another split of the same events.
     */
    @Test
    void theLakeLedgerRunsInTheTaskOfTheLakeWriter() {
        org.apache.flink.runtime.jobgraph.JobGraph job = graph(false).getJobGraph();
        List<String> vertices = java.util.stream.StreamSupport.stream(
                        job.getVertices().spliterator(), false)
                .map(org.apache.flink.runtime.jobgraph.JobVertex::getName)
                .filter(name -> name.contains(StreamJob.LAKE_LEDGER + ": Writer"))
                .toList();
        assertThat(vertices).hasSize(1);
        assertThat(vertices.get(0)).contains(StreamJob.DEDUP).contains(StreamJob.LAKE_SINK + ": Writer");
    }

    private static StreamNode node(StreamGraph graph, String uid) {
        return graph.getStreamNodes().stream()
                .filter(n -> uid.equals(n.getTransformationUID()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no operator with uid " + uid));
    }

    /** On, it only adds operators (new uids): every uid of the job without it is still there, unchanged. */
    @Test
    void attributionAddsItsOwnOperatorsAndChangesNoOtherUid() {
        List<String> off = uids(false);
        List<String> on = uids(true);
        assertThat(on).containsAll(off);
        List<String> added = new java.util.ArrayList<>(on);
        added.removeAll(off);
        assertThat(String.join(",", added))
                .contains(StreamJob.ATTRIBUTION_JOIN, StreamJob.ATTRIBUTION_WINDOWS, StreamJob.ATTRIBUTION_SINK);
    }

    private static List<String> uids(boolean attribution) {
        return graph(attribution).getStreamNodes().stream()
                .map(StreamNode::getTransformationUID)
                .filter(uid -> uid != null)
                .sorted()
                .collect(Collectors.toList());
    }

    private static StreamGraph graph(boolean attribution) {
        StreamSettings settings = StreamSettings.from(
                RecountConfig.load(null, Map.of()).with("attribution.enabled", Boolean.toString(attribution)));
        Configuration conf = new Configuration();
        conf.set(PipelineOptions.GENERIC_TYPES, false);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        KafkaInput input = new KafkaInput(
                "localhost:9",
                "ad-events",
                "g",
                new EventValidator(settings.eventTime().validation()),
                Map.of(),
                null);
        StreamJob.build(
                env,
                input.source(),
                StreamRun.sinks(settings, "graph-test"),
                settings.eventTime(),
                settings.sets(),
                settings.attributing() ? settings.attribution().rule() : null,
                Long.MIN_VALUE);
        return env.getStreamGraph();
    }
}
