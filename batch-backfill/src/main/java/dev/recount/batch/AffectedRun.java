package dev.recount.batch;

import static org.apache.spark.sql.functions.col;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.event.BackfillRecord;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowAlignment;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.BackfillWaitingTable;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchRunsTable.Mode;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.BatchWindowMetricsTable.ReplaceResult;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.db.tables.WindowSizes;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@code affected} run: the windows the backfill topic names, per metric set, recomputed in four steps — read the
 * topic and sort what each record needs ({@link #triage}); recompute, per set, the windows whose events are all in the
 * lake ({@link #recomputeReady}); replace them and finish the run in one transaction ({@link #commit}); only then
 * acknowledge the records read ({@link #commitOffsets}).
 *
 * <p>A record names the sets its event was too late for, each with its window ({@link BackfillRecord#sets()}; a record
 * of an older release: the default set). It is settled once every one of those sets this run can compute has its
 * window recomputed in a committed result; otherwise it waits in {@code backfill_waiting}, naming only the sets still
 * to do, so a later run recomputes those alone. A set the run does not compute ({@code --set NAME} names another)
 * leaves the record waiting for a run that does; a set no longer declared is dropped from it (its tables are no
 * longer written).
 */
final class AffectedRun {
    private static final Logger LOG = LoggerFactory.getLogger(AffectedRun.class);
    private static final Duration TOPIC_READ_TIMEOUT = Duration.ofMinutes(5);
    /** How many pending, and how many malformed, records a run's details list (each kind counted in full). */
    private static final int MAX_RECORDS_LISTED_IN_DETAILS = 100;

    private final RunContext run;
    private final BackfillSettings settings;

    AffectedRun(RunContext run) {
        this.run = run;
        this.settings = run.settings();
    }

    /** One set's window of one record that this run may recompute. */
    private record Need(BackfillBatch.Entry entry, BackfillRecord.SetWindow named, MetricSet set, long windowStart) {}

    /** A set's window of a record that this run leaves waiting, and why. */
    private record Unsettled(BackfillRecord.SetWindow named, String why) {}

    /**
     * @param skipDeleted go on where backfill records were deleted before this command read them (see {@link
     *     BackfillTopicReader#readAvailable}); otherwise such a run fails
     */
    BackfillRunner.AffectedReport run(boolean force, int maxRecords, boolean skipDeleted) throws SQLException {
        long started = System.nanoTime();
        try (Connection conn = run.db().getConnection()) {
            long runId = RunLifecycle.start(run, conn, Mode.AFFECTED, null, null, force);
            LOG.info(
                    "run {}: affected windows of metric sets {} from topic {} (group {}){}",
                    runId,
                    run.names(),
                    settings.backfillTopic(),
                    settings.affectedGroup(),
                    force ? " (forced)" : "");
            Map<TopicPartition, Long> commits;
            BackfillRunner.AffectedReport report;
            try (RunLocks locks = RunLocks.on(conn, settings.postgres().schema(), settings.lockTimeout());
                    ProgressReporter progress =
                            ProgressReporter.start(run.spark(), "run " + runId, run.progressInterval());
                    Consumer<byte[], byte[]> consumer = run.consumers().get()) {
                try {
                    locks.lockBackfillTopic();
                    String topic = settings.backfillTopic();
                    BackfillBatch read = BackfillTopicReader.readAvailable(
                            consumer, topic, maxRecords, TOPIC_READ_TIMEOUT, skipDeleted);
                    // The least recently checked, and any at a position just read (whenever it was checked): every
                    // waiting record the run touches is then one entry, and only those entries can be settled there.
                    List<BackfillWaitingTable.Waiting> toCheck =
                            new ArrayList<>(BackfillWaitingTable.load(conn, topic, maxRecords));
                    toCheck.addAll(BackfillWaitingTable.loadAt(
                            conn,
                            topic,
                            read.entries().stream()
                                    .map(BackfillBatch.Entry::position)
                                    .toList()));
                    BackfillBatch batch = read.withWaiting(topic, toCheck);
                    Triage triage = triage(runId, batch, StreamProgressTable.lakeCompleteUntil(conn), force);
                    Ready ready = recomputeReady(conn, locks, runId, triage.candidates(), force);

                    // An event is settled once a committed result includes it for every set; the others wait in
                    // backfill_waiting, committed with the results, so the topic's offsets can pass them.
                    Map<BackfillBatch.Entry, List<Unsettled>> pending = new LinkedHashMap<>();
                    for (BackfillBatch.Entry e : batch.entries()) {
                        List<Unsettled> left = new ArrayList<>(triage.pending().getOrDefault(e, List.of()));
                        left.addAll(ready.notReady().getOrDefault(e, List.of()));
                        if (!left.isEmpty()) pending.put(e, left);
                    }
                    commits = batch.offsetsToCommit();
                    Committed done = commit(conn, runId, batch, triage, ready, pending, commits);

                    Map<String, Long> committed = new LinkedHashMap<>();
                    commits.forEach((tp, o) -> committed.put(tp.toString(), o));
                    report = new BackfillRunner.AffectedReport(
                            runId,
                            batch.entries().size(),
                            triage.malformed(),
                            triage.expired(),
                            outcomes(ready, done.perSet()),
                            pending.size(),
                            done.waiting(),
                            committed,
                            batch.truncated(),
                            Duration.ofNanos(System.nanoTime() - started));
                    // Bounded: a lake hour that lost files can keep thousands waiting, run after run.
                    pending.entrySet().stream()
                            .limit(MAX_RECORDS_LISTED_IN_DETAILS)
                            .forEach(p -> LOG.warn(
                                    "run {}: backfill record {}@{} (event {}) waits: {}",
                                    runId,
                                    p.getKey().partition(),
                                    p.getKey().offset(),
                                    p.getKey().record().event().eventId,
                                    reason(p.getKey(), p.getValue())));
                } catch (Exception | Error e) {
                    RunLifecycle.recordFailure(run, conn, runId, e);
                    throw e;
                }
                // Outside the failure handling on purpose: the run's result is committed by now and stands.
                commitOffsets(consumer, runId, commits);
                return report;
            }
        }
    }

    /**
     * The backfill records sorted by what this run can do with each set they name: {@code candidates} may be
     * recomputed now, {@code pending} must wait (with why); {@code malformed} records, and sets whose window is before
     * the lake's retention horizon ({@code expired}, counted per record), are settled without a recompute.
     */
    private record Triage(
            List<Need> candidates,
            Map<BackfillBatch.Entry, List<Unsettled>> pending,
            int malformed,
            int expired,
            int undeclared) {}

    /** Sorts the records read against the sets this run computes, the lake's completeness boundary and retention. */
    private Triage triage(long runId, BackfillBatch batch, Optional<Long> until, boolean force) {
        Map<BackfillBatch.Entry, List<Unsettled>> pending = new LinkedHashMap<>();
        List<Need> candidates = new ArrayList<>();
        int malformed = 0;
        int expired = 0;
        int undeclared = 0;
        Optional<Long> horizon = batch.entries().isEmpty() ? Optional.empty() : retentionHorizon();
        for (BackfillBatch.Entry e : batch.entries()) {
            if (e.record() == null) {
                malformed++;
                continue;
            }
            boolean anyExpired = false;
            boolean anyUndeclared = false;
            long eventTs = e.record().event().eventTs;
            for (BackfillRecord.SetWindow named : e.record().sets()) {
                Optional<MetricSet> computed = run.sets().set(named.set());
                if (computed.isEmpty()) {
                    if (settings.sets().set(named.set()).isPresent()) {
                        pending.computeIfAbsent(e, k -> new ArrayList<>())
                                .add(new Unsettled(
                                        named,
                                        "waits for a run that computes metric set " + named.set() + " (this run: "
                                                + String.join(", ", run.names()) + ")"));
                    } else {
                        // Removed from the definitions: its tables are no longer written, so nothing is to do.
                        anyUndeclared = true;
                    }
                    continue;
                }
                MetricSet set = computed.get();
                WindowAlignment windows = set.windows();
                long window = windows.windowStart(eventTs);
                if (horizon.isPresent() && window < horizon.get()) {
                    // lake.retention deleted the window's hours: a recompute would see this event alone.
                    // The window's last result stands; waiting would keep it in backfill_waiting for good.
                    anyExpired = true;
                } else if (!force && (until.isEmpty() || windows.windowEnd(eventTs) > until.get())) {
                    pending.computeIfAbsent(e, k -> new ArrayList<>())
                            .add(new Unsettled(named, "beyond the lake's completeness boundary"));
                } else {
                    candidates.add(new Need(e, named, set, window));
                }
            }
            if (anyExpired) {
                expired++;
                LOG.warn(
                        "run {}: backfill record {}@{} (event {}) is for a window before the lake's"
                                + " retention horizon {}; settled without a recompute",
                        runId,
                        e.partition(),
                        e.offset(),
                        e.record().event().eventId,
                        Instant.ofEpochMilli(horizon.orElseThrow()));
            }
            if (anyUndeclared) {
                undeclared++;
                LOG.warn(
                        "run {}: backfill record {}@{} (event {}) names metric sets {} of which some are no longer"
                                + " declared; those are settled without a recompute",
                        runId,
                        e.partition(),
                        e.offset(),
                        e.record().event().eventId,
                        e.record().setNames());
            }
        }
        return new Triage(candidates, pending, malformed, expired, undeclared);
    }

    /**
     * What {@link #recomputeReady} did: per set the windows recomputed and staged, what that computed, and per record
     * the sets whose windows are not recomputed, with why: the event is not in the lake yet, its lake hour holds fewer
     * rows than the stream archived into it, or the set's stream rows there have another window size.
     */
    private record Ready(
            Map<MetricSet, TreeSet<Long>> windows,
            SetRecompute.Computed computed,
            Map<BackfillBatch.Entry, List<Unsettled>> notReady) {}

    /**
     * Recomputes and stages, per set, every window of {@code candidates} whose candidate events are all visible in
     * the lake (read once for all sets, copies included), after checking each set's stream window size and locking
     * the windows' days.
     */
    private Ready recomputeReady(Connection conn, RunLocks locks, long runId, List<Need> candidates, boolean force)
            throws SQLException {
        Map<MetricSet, TreeSet<Long>> candidateWindows = new LinkedHashMap<>();
        for (Need n : candidates)
            candidateWindows.computeIfAbsent(n.set(), s -> new TreeSet<>()).add(n.windowStart());
        Map<BackfillBatch.Entry, List<Unsettled>> notReady = new LinkedHashMap<>();
        Map<MetricSet, TreeSet<Long>> readyWindows = new LinkedHashMap<>();
        if (candidateWindows.isEmpty()) return new Ready(readyWindows, SetRecompute.Computed.empty(), notReady);

        // Window by window, not over the span from the first to the last: a record waiting for days would otherwise
        // scan every stream row in between on every run, and stop every run for rows of another size anywhere there.
        Map<MetricSet, SortedSet<Long>> otherSize = new HashMap<>();
        for (Map.Entry<MetricSet, TreeSet<Long>> c : candidateWindows.entrySet()) {
            MetricSet set = c.getKey();
            otherSize.put(
                    set,
                    WindowSizes.windowsHoldingOtherSizes(
                            conn, streamTable(set), c.getValue(), set.window().toMillis()));
        }
        List<Need> comparable = new ArrayList<>();
        for (Need n : candidates) {
            if (otherSize.get(n.set()).contains(n.windowStart())) {
                notReady.computeIfAbsent(n.entry(), k -> new ArrayList<>())
                        .add(new Unsettled(
                                n.named(),
                                streamTable(n.set()) + " holds rows of another window size than the "
                                        + dev.recount.core.config.Durations.format(
                                                n.set().window())
                                        + " window of metric set " + n.set().name()
                                        + " in its window: the stream job ran with another window size; delete"
                                        + " those stream rows"));
            } else {
                comparable.add(n);
            }
        }
        candidateWindows.forEach((set, ws) -> ws.removeAll(otherSize.get(set)));
        candidateWindows.values().removeIf(TreeSet::isEmpty);
        if (candidateWindows.isEmpty()) return new Ready(readyWindows, SetRecompute.Computed.empty(), notReady);
        TreeSet<Long> allStarts = new TreeSet<>();
        candidateWindows.values().forEach(allStarts::addAll);
        locks.lockWindows(allStarts);
        run.describeJobs(
                runId,
                "affected "
                        + candidateWindows.values().stream()
                                .mapToInt(TreeSet::size)
                                .sum() + " windows");
        SetRecompute.Computed c = SetRecompute.Computed.empty();
        // Copies included: whether an event is in the lake does not depend on which copy counts.
        LakeReader lake = new LakeReader(run.spark(), settings.lakePath());
        List<TimeRange> ranges = new ArrayList<>();
        candidateWindows.forEach((set, ws) -> ranges.addAll(TimeRange.ofWindows(ws, set.windows())));
        List<TimeRange> merged = TimeRange.merged(ranges);
        Dataset<Row> events = lake.read(merged).persist(StorageLevel.MEMORY_AND_DISK());
        try {
            // A window in an hour that lost files waits (its records in backfill_waiting) until the hour is whole
            // again, or a forced run takes what the lake holds.
            Map<Long, LakeShortfall.Hour> shortHours = new TreeMap<>();
            for (LakeShortfall.Hour h : LakeShortfall.find(conn, merged, lake::rowsByHour, settings.lakeCheckWait())) {
                shortHours.put(h.startMillis(), h);
            }
            if (!shortHours.isEmpty()) {
                LOG.warn(
                        "run {}: {}{}",
                        runId,
                        LakeShortfall.describe(List.copyOf(shortHours.values())),
                        force ? "; forced: recomputing from what the lake holds" : "; their windows wait");
            }
            Map<String, List<Long>> visible = visibleEvents(events, comparable);
            for (Need n : comparable) {
                long size = n.set().window().toMillis();
                LakeShortfall.Hour shortHour = force ? null : shortHourOf(shortHours, n.windowStart(), size);
                if (shortHour != null) {
                    notReady.computeIfAbsent(n.entry(), k -> new ArrayList<>())
                            .add(new Unsettled(
                                    n.named(), "its lake " + shortHour + " (files lost, or not committed yet)"));
                } else if (visible.getOrDefault(n.entry().record().event().eventId, List.of()).stream()
                        .anyMatch(ts -> ts >= n.windowStart() && ts < n.windowStart() + size)) {
                    readyWindows.computeIfAbsent(n.set(), s -> new TreeSet<>()).add(n.windowStart());
                } else {
                    notReady.computeIfAbsent(n.entry(), k -> new ArrayList<>())
                            .add(new Unsettled(n.named(), "not in the lake yet"));
                }
            }
            if (!readyWindows.isEmpty()) {
                List<WindowAggregation.SetScope> scopes = new ArrayList<>();
                // In the run's order of sets, so that outputs list them as the definitions do.
                for (MetricSet set : run.computed()) {
                    TreeSet<Long> ws = readyWindows.get(set);
                    if (ws == null) continue;
                    Column inReady = WindowAggregation.windowStart(LakeLayout.EVENT_TS, set.windows())
                            .isin(ws.toArray());
                    scopes.add(new WindowAggregation.SetScope(set, inReady));
                }
                c = SetRecompute.stage(run, conn, runId, events, scopes);
            }
        } finally {
            events.unpersist();
        }
        return new Ready(readyWindows, c, notReady);
    }

    /** The short hour that the window starting at {@code start} reads from, if any (a window may span hours). */
    private static LakeShortfall.Hour shortHourOf(Map<Long, LakeShortfall.Hour> shortHours, long start, long size) {
        if (shortHours.isEmpty()) return null;
        long last = start + size - 1;
        for (long h = LakeLayout.hourStart(start); h <= last; h += LakeLayout.HOUR_MILLIS) {
            if (shortHours.containsKey(h)) return shortHours.get(h);
        }
        return null;
    }

    /** Per candidate event id, the event times of its copies in the lake now (a record's set windows are checked). */
    private Map<String, List<Long>> visibleEvents(Dataset<Row> events, List<Need> candidates) {
        StructType schema = new StructType().add("wanted_id", DataTypes.StringType);
        Set<String> ids = new HashSet<>();
        for (Need n : candidates) ids.add(n.entry().record().event().eventId);
        List<Row> wanted = new ArrayList<>();
        for (String id : ids) wanted.add(RowFactory.create(id));
        Dataset<Row> wantedDf = functions.broadcast(run.spark().createDataFrame(wanted, schema));
        Dataset<Row> inLake = events.select(col(LakeLayout.EVENT_ID), col(LakeLayout.EVENT_TS));
        Dataset<Row> present = inLake.join(
                        wantedDf, inLake.col(LakeLayout.EVENT_ID).equalTo(wantedDf.col("wanted_id")), "left_semi")
                .distinct();
        Map<String, List<Long>> visible = new HashMap<>();
        for (Row r : present.collectAsList()) {
            visible.computeIfAbsent(r.getString(0), k -> new ArrayList<>()).add(r.getLong(1));
        }
        return visible;
    }

    /** What {@link #commit} committed: per set the replace, and what waits after it. */
    private record Committed(Map<String, ReplaceResult> perSet, BackfillWaitingTable.Summary waiting) {}

    /**
     * Replaces the recomputed windows of every set from staging, keeps the pending records waiting (each naming only
     * the sets still to do) and deletes the settled ones, and finishes the run, in one transaction, with the run's
     * details (records read, skipped, windows per set, pending records, offsets about to be committed).
     */
    private Committed commit(
            Connection conn,
            long runId,
            BackfillBatch batch,
            Triage triage,
            Ready ready,
            Map<BackfillBatch.Entry, List<Unsettled>> pending,
            Map<TopicPartition, Long> commits)
            throws SQLException {
        SetRecompute.Computed computed = ready.computed();
        long events = computed.eventsOverSets();
        long lakeRows = computed.sets().values().stream()
                .mapToLong(SetRecompute.SetComputed::lakeRows)
                .sum();
        long counted = computed.sets().values().stream()
                .mapToLong(s -> s.events() + s.leftOut())
                .sum();
        ObjectNode details = computed.details(counted);
        // Each set's windows were read apart: the lake rows of all of them, duplicates among each set's.
        details.put("lake_rows", lakeRows);
        details.put("duplicates_dropped", lakeRows - counted);
        details.put("records_read", batch.entries().size());
        details.put("malformed_skipped", triage.malformed());
        // Where they were, and why: the topic keeps them, so the one who reads this can look at their bytes.
        details.set("malformed_records", malformedJson(batch));
        details.put("expired", triage.expired());
        details.put("undeclared_sets", triage.undeclared());
        Long from = null;
        Long to = null;
        List<RunLifecycle.SetReplace> replaces = new ArrayList<>();
        for (MetricSet set : run.computed()) {
            TreeSet<Long> ws = ready.windows().getOrDefault(set, new TreeSet<>());
            ArrayNode list = RunOutput.setDetails(details, set.name()).putArray(BatchRunsTable.DETAILS_WINDOWS);
            ws.forEach(w -> list.add(Instant.ofEpochMilli(w).toString()));
            replaces.add(new RunLifecycle.SetReplace(
                    set, ws.isEmpty() ? null : new BatchWindowMetricsTable.Windows(List.copyOf(ws)), false));
            if (!ws.isEmpty()) {
                from = from == null ? ws.first() : Math.min(from, ws.first());
                long end = ws.last() + set.window().toMillis();
                to = to == null ? end : Math.max(to, end);
            }
        }
        details.set("pending", pendingJson(pending));
        details.set("offsets_to_commit", offsetsJson(commits));
        String topic = settings.backfillTopic();
        RunLifecycle.InTransaction<BackfillWaitingTable.Summary> waiting = c -> {
            List<BackfillWaitingTable.Waiting> keep = new ArrayList<>();
            pending.forEach((e, left) -> keep.add(new BackfillWaitingTable.Waiting(
                    e.position(), remaining(e, left).toJson(), reason(e, left))));
            BackfillWaitingTable.keep(c, topic, runId, keep);
            List<BackfillWaitingTable.Position> settled = new ArrayList<>();
            for (BackfillBatch.Entry e : batch.entries()) {
                if (e.waiting() && !pending.containsKey(e)) settled.add(e.position());
            }
            details.put("waiting_settled", BackfillWaitingTable.settle(c, topic, settled));
            // Read here, in the transaction: after its commit nothing may fail the run any more.
            return BackfillWaitingTable.summary(c, topic);
        };
        RunLifecycle.Committed<BackfillWaitingTable.Summary> done =
                RunLifecycle.commit(conn, runId, replaces, events, from, to, details, waiting);
        return new Committed(done.perSet(), done.also());
    }

    /** The record with only the sets it still waits for: a later run recomputes those alone. */
    private static BackfillRecord remaining(BackfillBatch.Entry e, List<Unsettled> left) {
        BackfillRecord r = e.record();
        List<BackfillRecord.SetWindow> sets = new ArrayList<>();
        for (BackfillRecord.SetWindow named : r.sets()) {
            if (left.stream().anyMatch(u -> u.named().equals(named))) sets.add(named);
        }
        return new BackfillRecord(r.event(), sets, r.watermark(), r.topic(), r.partition(), r.offset());
    }

    /**
     * Why a record waits: the reason alone for a record of the default set alone (as before metric sets), else each
     * set's, named.
     */
    private static String reason(BackfillBatch.Entry e, List<Unsettled> left) {
        if (left.size() == 1 && e.record().setNames().equals(List.of(MetricSet.DEFAULT)))
            return left.get(0).why();
        List<String> each = new ArrayList<>();
        for (Unsettled u : left) each.add("metric set " + u.named().set() + ": " + u.why());
        return String.join("; ", each);
    }

    private List<BackfillRunner.SetOutcome> outcomes(Ready ready, Map<String, ReplaceResult> perSet) {
        List<BackfillRunner.SetOutcome> out = new ArrayList<>();
        for (MetricSet set : run.computed()) {
            SetRecompute.SetComputed s = ready.computed().of(set);
            ReplaceResult r = perSet.getOrDefault(set.name(), ReplaceResult.NOTHING);
            out.add(new BackfillRunner.SetOutcome(
                    set.name(),
                    List.copyOf(ready.windows().getOrDefault(set, new TreeSet<>())),
                    s == null ? 0 : s.events(),
                    s == null ? 0 : s.leftOut(),
                    r.written(),
                    r.unchanged(),
                    r.deleted(),
                    null));
        }
        return out;
    }

    private static String streamTable(MetricSet set) {
        return new SetTables(set).streamWindowMetrics();
    }

    /** Where lake.retention has deleted the lake up to, if it ever did. */
    private Optional<Long> retentionHorizon() {
        try {
            return LakeRetention.horizon(LakeStorage.open(
                    settings.lakePath(), run.spark().sparkContext().hadoopConfiguration()));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(
                    "cannot read the lake's retention horizon at " + settings.lakePath() + ": " + e.getMessage(), e);
        }
    }

    private static ArrayNode pendingJson(Map<BackfillBatch.Entry, List<Unsettled>> pending) {
        ArrayNode list = RunOutput.JSON.createArrayNode();
        pending.entrySet().stream().limit(MAX_RECORDS_LISTED_IN_DETAILS).forEach(p -> {
            ObjectNode n = list.addObject();
            n.put("topic", p.getKey().partition().topic());
            n.put("partition", p.getKey().partition().partition());
            n.put("offset", p.getKey().offset());
            n.put("event_id", p.getKey().record().event().eventId);
            ArrayNode sets = n.putArray("metric_sets");
            p.getValue().forEach(u -> sets.add(u.named().set()));
            n.put("reason", reason(p.getKey(), p.getValue()));
        });
        return list;
    }

    private static ArrayNode malformedJson(BackfillBatch batch) {
        ArrayNode list = RunOutput.JSON.createArrayNode();
        batch.entries().stream()
                .filter(e -> e.record() == null)
                .limit(MAX_RECORDS_LISTED_IN_DETAILS)
                .forEach(e -> {
                    ObjectNode n = list.addObject();
                    n.put("topic", e.partition().topic());
                    n.put("partition", e.partition().partition());
                    n.put("offset", e.offset());
                    n.put("reason", e.malformed());
                });
        return list;
    }

    private static ObjectNode offsetsJson(Map<TopicPartition, Long> commits) {
        ObjectNode n = RunOutput.JSON.createObjectNode();
        commits.forEach((tp, o) -> n.put(tp.toString(), o));
        return n;
    }

    /**
     * Acknowledges the records read, only now that the results including their events and the records still waiting
     * are committed. If this fails the run's result stands; the next run recomputes the same windows again.
     */
    private static void commitOffsets(
            Consumer<byte[], byte[]> consumer, long runId, Map<TopicPartition, Long> commits) {
        if (!commits.isEmpty()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            commits.forEach((tp, o) -> offsets.put(tp, new OffsetAndMetadata(o, "recount batch run " + runId)));
            try {
                consumer.commitSync(offsets);
            } catch (RuntimeException e) {
                throw new IllegalStateException(
                        "run " + runId + " committed its results, but committing the"
                                + " backfill offsets failed (" + e.getMessage() + "); the next run recomputes those"
                                + " windows again",
                        e);
            }
        }
        LOG.info("run {}: committed backfill offsets {}", runId, commits);
    }
}
