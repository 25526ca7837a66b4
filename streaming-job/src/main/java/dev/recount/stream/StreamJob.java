package dev.recount.stream;

import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.sets.MetricSets;
import dev.recount.stream.attribution.AttributionDelta;
import dev.recount.stream.attribution.AttributionJoin;
import dev.recount.stream.attribution.AttributionWindows;
import dev.recount.stream.attribution.EventInSets;
import dev.recount.stream.route.DedupAndRouteTooLate;
import dev.recount.stream.route.LateAtWindowToBackfill;
import dev.recount.stream.route.RouteInvalidRecords;
import dev.recount.stream.sets.JobSets;
import dev.recount.stream.sets.SetKeys;
import dev.recount.stream.sink.SetAttributionRow;
import dev.recount.stream.sink.SetWindowRow;
import dev.recount.stream.source.InputWatermarks;
import dev.recount.stream.source.ParsedRecord;
import dev.recount.stream.types.BackfillRecordSerializer;
import dev.recount.stream.types.EventTypes;
import dev.recount.stream.window.SetPartial;
import dev.recount.stream.window.WindowMetricsOperator;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The speed layer's pipeline, top-down (CONTRACT §1–§4), computing every metric set of the definitions in one pass:
 *
 * <pre>
 * kafka-input (validates, declared attributes included; per-partition watermarks from valid events only)
 *   └ validate ──dead letters──▶ dead-letter-sink
 *       └ keyBy hash bucket of event_id ▶ dedup (+ partial sums per set, window, dimension values)
 *           │                                  ──too late for some set (one record naming those sets)──▶ backfill-sink
 *           ├─every event it receives, chained─▶ lake-sink (every valid event, before de-duplication: the lake is raw)
 *           │                                  └▶ lake-ledger (the same events counted per hour: lake_archived_rows)
 *           ├ keyBy (set, dimension values) ▶ window-metrics ──late (safety net)──▶ late-at-window ▶ backfill-sink
 *           │   └ window-metrics-sink (PostgreSQL, two-phase; each set's rows into its own table)
 *           └─attribution events (only with attribution on for some set)─▶ keyBy request_id ▶ attribution-join
 *               └ keyBy (window, set, dimension values) ▶ attribution-windows ▶ attribution-metrics-sink (two-phase)
 * </pre>
 *
 * Validation, watermarks, de-duplication and the lake are shared by the sets; windows, revisions and too-late routing
 * are per set, each with its own window size and the job's allowed lateness (core's {@code EventTime} of the set).
 * Every operator has a fixed uid, so state in checkpoints survives changes to the job and to the definitions.
 */
public final class StreamJob {
    public static final String SOURCE = "kafka-input";
    public static final String VALIDATE = "validate";
    public static final String DEAD_LETTER_SINK = "dead-letter-sink";
    /**
     * Not {@link #DEAD_LETTER_SINK} / {@link #BACKFILL_SINK}: the side outputs moved from Flink's KafkaSink to
     * CheckpointedTopicSink, whose state is not the KafkaSink's (see streaming-job/README.md, upgrades).
     */
    public static final String DEAD_LETTER_SINK_UID = "dead-letter-publisher";

    public static final String BACKFILL_SINK_UID = "backfill-publisher";
    public static final String LAKE_SINK = "lake-sink";
    public static final String LAKE_LEDGER = "lake-ledger";
    public static final String DEDUP = "dedup-and-route-too-late";
    /**
     * Not {@link #DEDUP} nor {@code dedup-by-id-bucket}: the state moved from one entry per id to id buckets, then
     * from id strings to 128-bit digests with buffered partial sums (see DedupAndRouteTooLate and
     * docs/operations.md, "Upgrading").
     */
    public static final String DEDUP_UID = "dedup-by-id-digest";

    public static final String WINDOW = "window-metrics";
    /**
     * Not {@link #WINDOW}: the window state moved from Flink's window operator (an entry per key and window, two
     * timers each) to one entry per key (WindowMetricsOperator).
     */
    public static final String WINDOW_UID = "window-metrics-by-key";

    public static final String LATE_AT_WINDOW = "late-at-window";
    public static final String BACKFILL_SINK = "backfill-sink";
    public static final String WINDOW_METRICS_SINK = "window-metrics-sink";
    /**
     * Only with attribution on for some set: new operators with their own uids, so turning it on restores any
     * checkpoint.
     */
    public static final String ATTRIBUTION_JOIN = "attribution-join";

    public static final String ATTRIBUTION_WINDOWS = "attribution-windows";
    public static final String ATTRIBUTION_SINK = "attribution-metrics-sink";

    private StreamJob() {}

    /**
     * Adds the pipeline to {@code env}, without attribution. Checkpointing, parallelism and restore settings are the
     * caller's.
     *
     * @param settings    the event-time rules: out-of-orderness, idleness, allowed lateness (its window size is not
     *                    used: every set has its own)
     * @param definitions the metric sets to compute ({@code MetricSets.fromConfig}), all in this one pass
     * @param closedUntil windows ending at or before this (epoch ms) are final and receive no more events
     *                    (after a finished --bounded run); {@code Long.MIN_VALUE} for none
     */
    public static void build(
            StreamExecutionEnvironment env,
            Source<ParsedRecord, ?, ?> input,
            StreamSinks sinks,
            EventTimeSettings settings,
            MetricSets definitions,
            long closedUntil) {
        build(env, input, sinks, settings, definitions, null, closedUntil);
    }

    /**
     * As above, with impression–click attribution by {@code attribution} (its rule) for the sets with attribution on,
     * when {@code sinks.attribution()} is set; otherwise (or with no such set) the job is exactly the one without.
     */
    public static void build(
            StreamExecutionEnvironment env,
            Source<ParsedRecord, ?, ?> input,
            StreamSinks sinks,
            EventTimeSettings settings,
            MetricSets definitions,
            AttributionRule attribution,
            long closedUntil) {
        Objects.requireNonNull(settings, "settings");
        JobSets sets = JobSets.of(Objects.requireNonNull(definitions, "definitions"), settings);
        // What every set shares: an event may be late on arrival, and an id must be remembered, for the longest window.
        EventTimeSettings shared = settings.withWindowSize(sets.longestWindow());
        boolean attributing = attribution != null
                && sinks.attribution() != null
                && !sets.withAttribution().isEmpty();
        DataStream<ParsedRecord> records = env.fromSource(
                        input,
                        new InputWatermarks(
                                shared.outOfOrderness(), shared.idleness(), shared.maxFuture(), shared.lateOnArrival()),
                        SOURCE,
                        TypeInformation.of(ParsedRecord.class))
                .uid(SOURCE);

        SingleOutputStreamOperator<AdEvent> valid = records.process(new RouteInvalidRecords(), EventTypes.AD_EVENT)
                .name(VALIDATE)
                .uid(VALIDATE);
        valid.getSideOutput(RouteInvalidRecords.DEAD_LETTERS)
                .sinkTo(sinks.deadLetters())
                .name(DEAD_LETTER_SINK)
                .uid(DEAD_LETTER_SINK_UID)
                // One ordered publication per topic (CheckpointedTopicSink); side outputs are a small share.
                .setParallelism(1);

        SingleOutputStreamOperator<SetPartial> unique = valid.keyBy(DedupAndRouteTooLate::idBucket, Types.INT)
                .transform(
                        DEDUP,
                        SetPartial.TYPE,
                        new DedupAndRouteTooLate(sets, shared.dedupHorizon(), closedUntil, attributing))
                .uid(DEDUP_UID);

        // Every valid event, before de-duplication, from the de-dup operator's input (its ALL_EVENTS side output):
        // the lake writer is chained there, so the source thread — the job's critical path with skewed partitions —
        // serializes each event once, and nothing reads it back a second time. Exactly-once as before: a checkpoint
        // barrier follows every event before it into the lake writer, whose files are committed with that checkpoint.
        DataStream<AdEvent> archived = unique.getSideOutput(DedupAndRouteTooLate.ALL_EVENTS);
        archived.sinkTo(sinks.lake()).name(LAKE_SINK).uid(LAKE_SINK);
        // The same events, counted per lake hour and committed with the same checkpoints: what the batch layer
        // checks the lake against before it recomputes from it (a lake that lost files must not win).
        archived.sinkTo(sinks.lakeLedger()).name(LAKE_LEDGER).uid(LAKE_LEDGER);

        SingleOutputStreamOperator<SetWindowRow> windows = windowMetrics(unique, sets);
        DataStream<BackfillRecord> lateAtWindow = windows.getSideOutput(WindowMetricsOperator.LATE_AT_WINDOW)
                .process(new LateAtWindowToBackfill(sets), BackfillRecordSerializer.TYPE)
                .name(LATE_AT_WINDOW)
                .uid(LATE_AT_WINDOW);
        unique.getSideOutput(DedupAndRouteTooLate.TOO_LATE)
                .union(lateAtWindow)
                .sinkTo(sinks.backfill())
                .name(BACKFILL_SINK)
                .uid(BACKFILL_SINK_UID)
                .setParallelism(1);

        windows.sinkTo(sinks.windowMetrics()).name(WINDOW_METRICS_SINK).uid(WINDOW_METRICS_SINK);

        if (attributing) {
            attribution(unique.getSideOutput(DedupAndRouteTooLate.ATTRIBUTION_EVENTS), sets, attribution)
                    .sinkTo(sinks.attribution())
                    .name(ATTRIBUTION_SINK)
                    .uid(ATTRIBUTION_SINK);
        }
    }

    /**
     * The attribution join keyed by request_id, one for every set with attribution ({@link AttributionJoin}), and its
     * sums per set and window of the click ({@link AttributionWindows}): rows with set, key, bounds, metrics, revision.
     */
    public static SingleOutputStreamOperator<SetAttributionRow> attribution(
            DataStream<EventInSets> events, JobSets sets, AttributionRule rule) {
        return events.keyBy(AttributionJoin::key, Types.STRING)
                .transform(
                        ATTRIBUTION_JOIN, TypeInformation.of(AttributionDelta.class), new AttributionJoin(rule, sets))
                .uid(ATTRIBUTION_JOIN)
                .keyBy(AttributionWindows.keySelector(sets), SetKeys.ATTRIBUTION_KEY)
                .process(new AttributionWindows(sets), SetAttributionRow.TYPE)
                .name(ATTRIBUTION_WINDOWS)
                .uid(ATTRIBUTION_WINDOWS);
    }

    /**
     * Tumbling event-time windows of every set per (set, dimension values) with allowed lateness, over the de-dup
     * operator's partial sums ({@link WindowMetricsOperator}): rows with set, key, bounds, measures and revision.
     */
    public static SingleOutputStreamOperator<SetWindowRow> windowMetrics(
            DataStream<SetPartial> partials, JobSets sets) {
        return partials.keyBy(WindowMetricsOperator.keySelector(sets), SetKeys.WINDOW_KEY)
                .transform(WINDOW, SetWindowRow.TYPE, new WindowMetricsOperator(sets))
                .uid(WINDOW_UID);
    }
}
