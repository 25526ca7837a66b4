package dev.recount.batch;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.pmod;
import static org.apache.spark.sql.functions.sum;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.event.AdEvent;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.metrics.Metric;
import dev.recount.core.window.WindowAlignment;
import dev.recount.db.tables.BackfillWaitingTable;
import dev.recount.db.tables.BatchAttributionMetricsTable;
import dev.recount.db.tables.BatchRunsTable;
import dev.recount.db.tables.BatchRunsTable.Mode;
import dev.recount.db.tables.BatchWindowMetricsTable;
import dev.recount.db.tables.StreamProgressTable;
import dev.recount.db.tables.StreamWindowMetricsTable;
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
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One backfill run from start to finish: a {@code batch_runs} row (committed at once, so even a run that dies
 * is visible), the completeness boundary, the advisory locks, the Spark computation, staging, and ONE
 * transaction that replaces the run's scope and marks the run succeeded. Any failure rolls back, drops the
 * run's staging rows and records the error on the run row; the previous result stays in place.
 */
public final class BackfillRunner {
    private static final Logger LOG = LoggerFactory.getLogger(BackfillRunner.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Results up to this many window rows are staged from the driver; larger ones from the executors. */
    public static final long DEFAULT_DRIVER_MAX_ROWS = 50_000;

    private static final Duration TOPIC_READ_TIMEOUT = Duration.ofMinutes(5);
    /** How many pending, and how many malformed, records a run's details list (each kind counted in full). */
    private static final int MAX_RECORDS_LISTED_IN_DETAILS = 100;

    private final SparkSession spark;
    private final DataSource db;
    private final BackfillSettings settings;
    private final StagingWriter staging;
    private final Supplier<Consumer<byte[], byte[]>> consumers;
    private final Duration progressInterval;

    public BackfillRunner(
            SparkSession spark,
            DataSource db,
            BackfillSettings settings,
            String password,
            long driverMaxRows,
            Duration progressInterval) {
        this.spark = spark;
        this.db = db;
        this.settings = settings;
        this.staging = new StagingWriter(settings.postgres(), password, driverMaxRows);
        this.consumers = () -> BackfillTopicReader.newConsumer(settings.bootstrapServers(), settings.affectedGroup());
        this.progressInterval = progressInterval;
    }

    /** What a range (or nightly) run did. */
    public record RangeReport(
            long runId,
            Mode mode,
            TimeRange range,
            boolean forced,
            long events,
            long lakeRows,
            long windowsWritten,
            long windowsUnchanged,
            long windowsDeleted,
            Duration elapsed) {
        public String summary() {
            return "run " + runId + " (" + mode.wireName() + " " + range + (forced ? ", forced" : "") + "): "
                    + events + " events (" + lakeRows + " lake rows), " + windowsWritten + " window rows written, "
                    + windowsUnchanged + " unchanged, " + windowsDeleted + " deleted, " + seconds(elapsed);
        }

        /** The facts of {@link #summary()} for {@code --json}. */
        public ObjectNode json() {
            ObjectNode json = JsonOutput.object();
            json.put("run_id", runId);
            json.put("mode", mode.wireName());
            json.put("from", Instant.ofEpochMilli(range.fromMillis()).toString());
            json.put("to", Instant.ofEpochMilli(range.toMillis()).toString());
            json.put("forced", forced);
            json.put("events", events);
            json.put("lake_rows", lakeRows);
            json.put("window_rows_written", windowsWritten);
            json.put("window_rows_unchanged", windowsUnchanged);
            json.put("window_rows_deleted", windowsDeleted);
            json.put("duration_ms", elapsed.toMillis());
            return json;
        }
    }

    /**
     * What an affected run did.
     *
     * @param pending the records this run checked and could not settle; they wait in {@code backfill_waiting}
     * @param waiting all records waiting after this run, and since when the oldest has (more than {@code pending}
     *     when more wait than one run checks)
     */
    public record AffectedReport(
            long runId,
            int recordsRead,
            int malformed,
            int expired,
            List<Long> windows,
            long events,
            long windowsWritten,
            long windowsUnchanged,
            long windowsDeleted,
            int pending,
            BackfillWaitingTable.Summary waiting,
            Map<String, Long> committed,
            boolean truncated,
            Duration elapsed) {
        public String summary() {
            StringBuilder s = new StringBuilder("run " + runId + " (affected): " + recordsRead + " backfill records, "
                    + windows.size() + " windows recomputed (" + events + " events, " + windowsWritten
                    + " window rows written, " + windowsUnchanged + " unchanged, " + windowsDeleted + " deleted), "
                    + seconds(elapsed));
            if (pending > 0)
                s.append("; ")
                        .append(pending)
                        .append(" records pending (not in the lake yet, beyond its completeness boundary, or in a lake"
                                + " hour short of rows), kept in backfill_waiting and checked again by every run");
            if (waiting.records() > pending)
                s.append("; ").append(waiting.records()).append(" records waiting in all");
            waiting.oldestSinceMillis()
                    .ifPresent(t -> s.append(", the oldest since ").append(Instant.ofEpochMilli(t)));
            if (malformed > 0) s.append("; ").append(malformed).append(" malformed records skipped");
            if (expired > 0)
                s.append("; ")
                        .append(expired)
                        .append(" records for windows before the lake's retention"
                                + " horizon settled without a recompute");
            if (truncated) s.append("; more records remain on the topic: run again");
            return s.toString();
        }

        /** The facts of {@link #summary()} for {@code --json}; windows are their start instants. */
        public ObjectNode json() {
            ObjectNode json = JsonOutput.object();
            json.put("run_id", runId);
            json.put("mode", Mode.AFFECTED.wireName());
            ArrayNode starts = json.putArray("windows");
            windows.forEach(start -> starts.add(Instant.ofEpochMilli(start).toString()));
            json.put("records_read", recordsRead);
            json.put("events", events);
            json.put("window_rows_written", windowsWritten);
            json.put("window_rows_unchanged", windowsUnchanged);
            json.put("window_rows_deleted", windowsDeleted);
            json.put("pending", pending);
            json.put("waiting", waiting.records());
            json.put(
                    "oldest_waiting_since",
                    waiting.oldestSinceMillis()
                            .map(t -> Instant.ofEpochMilli(t).toString())
                            .orElse(null));
            json.put("malformed", malformed);
            json.put("expired", expired);
            json.put("truncated", truncated);
            ObjectNode offsets = json.putObject("committed");
            committed.forEach(offsets::put);
            json.put("duration_ms", elapsed.toMillis());
            return json;
        }
    }

    public RangeReport recomputeRange(Mode mode, TimeRange range, boolean force) throws SQLException {
        range.requireAligned(settings.windows());
        long started = System.nanoTime();
        try (Connection conn = db.getConnection()) {
            long runId = startRun(conn, mode, range.fromMillis(), range.toMillis(), force);
            LOG.info("run {}: {} {}{}", runId, mode.wireName(), range, force ? " (forced)" : "");
            try (RunLocks locks = RunLocks.on(conn, settings.postgres().schema(), settings.lockTimeout());
                    ProgressReporter progress = ProgressReporter.start(spark, "run " + runId, progressInterval)) {
                Optional<Long> until = requireComplete(conn, range.toMillis(), force);
                requireStreamWindowSize(conn, range.fromMillis(), range.toMillis());
                AttributionRule attribution = settings.attribution().enabled()
                        ? settings.attribution().rule()
                        : null;
                // With attribution, the impressions one attribution window before the range are read too: lock
                // their days as well, so no compaction swaps those hours meanwhile.
                locks.lockRange(
                        attribution == null ? range : AttributionAggregation.lookback(range, attribution),
                        settings.windows());
                describeJobs(runId, mode.wireName() + " " + range);
                LOG.info("run {}: reading the lake at {}", runId, settings.lakePath());
                LakeReader lake = new LakeReader(spark, settings.lakePath());
                Dataset<Row> lakeRows = lake.read(List.of(range));
                // What the stream archived into the hours read, before they are read: see requireLakeHoldsArchived.
                List<TimeRange> read =
                        List.of(attribution == null ? range : AttributionAggregation.lookback(range, attribution));
                SortedMap<Long, Long> archived = LakeShortfall.archived(conn, read);
                Computed c;
                try (WindowAggregation.Recomputed windowRows =
                        WindowAggregation.recompute(lakeRows, settings.windows())) {
                    c = computeAndStage(conn, runId, windowRows.rows(), archived.isEmpty() ? null : range);
                }
                List<LakeShortfall.Hour> shortHours =
                        requireLakeHoldsArchived(runId, lake, archived, c.lakeRowsByHour(), force);
                ObjectNode details = c.details();
                details.put(
                        "lake_complete_until",
                        until.map(ms -> Instant.ofEpochMilli(ms).toString()).orElse(null));
                if (!shortHours.isEmpty()) details.put("lake_short_hours", LakeShortfall.describe(shortHours));
                if (attribution != null)
                    details.put("attribution_rows", stageAttribution(conn, runId, range, attribution));
                BatchWindowMetricsTable.ReplaceResult r = commitResult(
                                conn,
                                runId,
                                new BatchWindowMetricsTable.Range(range.fromMillis(), range.toMillis()),
                                c,
                                null,
                                null,
                                details,
                                attribution != null,
                                null)
                        .result();
                return new RangeReport(
                        runId,
                        mode,
                        range,
                        force,
                        c.events(),
                        c.lakeRows(),
                        r.written(),
                        r.unchanged(),
                        r.deleted(),
                        Duration.ofNanos(System.nanoTime() - started));
            } catch (Exception | Error e) {
                recordFailure(conn, runId, e);
                throw e;
            }
        }
    }

    /**
     * Recomputes the windows the backfill topic names, in four steps: read the topic and sort its records
     * ({@link #triage}); recompute the windows whose events are all in the lake ({@link #recomputeReady}); replace
     * them and finish the run in one transaction ({@link #commitAffected}); only then acknowledge the settled records
     * ({@link #commitOffsets}).
     *
     * @param skipDeleted go on where backfill records were deleted before this command read them (see {@link
     *     BackfillTopicReader#readAvailable}); otherwise such a run fails
     */
    public AffectedReport recomputeAffected(boolean force, int maxRecords, boolean skipDeleted) throws SQLException {
        long started = System.nanoTime();
        try (Connection conn = db.getConnection()) {
            long runId = startRun(conn, Mode.AFFECTED, null, null, force);
            LOG.info(
                    "run {}: affected windows from topic {} (group {}){}",
                    runId,
                    settings.backfillTopic(),
                    settings.affectedGroup(),
                    force ? " (forced)" : "");
            Map<TopicPartition, Long> commits;
            AffectedReport report;
            try (RunLocks locks = RunLocks.on(conn, settings.postgres().schema(), settings.lockTimeout());
                    ProgressReporter progress = ProgressReporter.start(spark, "run " + runId, progressInterval);
                    Consumer<byte[], byte[]> consumer = consumers.get()) {
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
                    ReadyWindows ready = recomputeReady(conn, locks, runId, triage.candidates(), force);

                    // An event is settled once a committed result includes it; the others wait in backfill_waiting,
                    // committed with the results, so the topic's offsets can pass them.
                    Map<BackfillBatch.Entry, String> pending = new LinkedHashMap<>(triage.pending());
                    pending.putAll(ready.notReady());
                    commits = batch.offsetsToCommit();
                    AffectedCommit done = commitAffected(conn, runId, batch, triage, ready, pending, commits);
                    BatchWindowMetricsTable.ReplaceResult r = done.result();
                    BackfillWaitingTable.Summary waiting = done.waiting();

                    Map<String, Long> committed = new LinkedHashMap<>();
                    commits.forEach((tp, o) -> committed.put(tp.toString(), o));
                    report = new AffectedReport(
                            runId,
                            batch.entries().size(),
                            triage.malformed(),
                            triage.expired(),
                            List.copyOf(ready.windows()),
                            ready.computed().events(),
                            r.written(),
                            r.unchanged(),
                            r.deleted(),
                            pending.size(),
                            waiting,
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
                                    p.getValue()));
                } catch (Exception | Error e) {
                    recordFailure(conn, runId, e);
                    throw e;
                }
                // Outside the failure handling on purpose: the run's result is committed by now and stands.
                commitOffsets(consumer, runId, commits);
                return report;
            }
        }
    }

    /**
     * The backfill records sorted by what this run can do with them: {@code candidates} may be recomputed now,
     * {@code pending} must wait (with why), {@code malformed} and {@code expired} are settled without a recompute.
     */
    private record Triage(
            List<BackfillBatch.Entry> candidates,
            Map<BackfillBatch.Entry, String> pending,
            int malformed,
            int expired) {}

    /** Sorts the records read from the backfill topic against the lake's completeness boundary and retention. */
    private Triage triage(long runId, BackfillBatch batch, Optional<Long> until, boolean force) {
        WindowAlignment windows = settings.windows();
        Map<BackfillBatch.Entry, String> pending = new LinkedHashMap<>();
        List<BackfillBatch.Entry> candidates = new ArrayList<>();
        int malformed = 0;
        int expired = 0;
        Optional<Long> horizon = batch.entries().isEmpty() ? Optional.empty() : retentionHorizon();
        for (BackfillBatch.Entry e : batch.entries()) {
            if (e.record() == null) {
                malformed++;
                continue;
            }
            long windowEnd = windows.windowEnd(e.record().event().eventTs);
            if (horizon.isPresent() && windowOf(e, windows) < horizon.get()) {
                // lake.retention deleted the window's hours: a recompute would see this event alone.
                // The window's last result stands; waiting would keep it in backfill_waiting for good.
                expired++;
                LOG.warn(
                        "run {}: backfill record {}@{} (event {}) is for a window before the lake's"
                                + " retention horizon {}; settled without a recompute",
                        runId,
                        e.partition(),
                        e.offset(),
                        e.record().event().eventId,
                        Instant.ofEpochMilli(horizon.get()));
            } else if (!force && (until.isEmpty() || windowEnd > until.get())) {
                pending.put(e, "beyond the lake's completeness boundary");
            } else {
                candidates.add(e);
            }
        }
        return new Triage(candidates, pending, malformed, expired);
    }

    /**
     * What {@link #recomputeReady} did: the windows recomputed and staged, what that computed, and the candidates
     * whose windows are not recomputed, with why: their event is not in the lake yet, or their lake hour holds fewer
     * rows than the stream archived into it.
     */
    private record ReadyWindows(TreeSet<Long> windows, Computed computed, Map<BackfillBatch.Entry, String> notReady) {}

    /**
     * Recomputes and stages every window of {@code candidates} whose candidate events are all visible in the lake
     * (read once, copies included), after checking the stream's window size and locking the windows.
     */
    private ReadyWindows recomputeReady(
            Connection conn, RunLocks locks, long runId, List<BackfillBatch.Entry> candidates, boolean force)
            throws SQLException {
        WindowAlignment windows = settings.windows();
        TreeSet<Long> candidateWindows = new TreeSet<>();
        for (BackfillBatch.Entry e : candidates) candidateWindows.add(windowOf(e, windows));
        TreeSet<Long> readyWindows = new TreeSet<>();
        Map<BackfillBatch.Entry, String> notReady = new LinkedHashMap<>();
        if (candidateWindows.isEmpty()) return new ReadyWindows(readyWindows, Computed.empty(), notReady);

        // Window by window, not over the span from the first to the last: a record waiting for days would otherwise
        // scan every stream row in between on every run, and stop every run for rows of another size anywhere there.
        SortedSet<Long> otherSize = WindowSizes.windowsHoldingOtherSizes(
                conn, StreamWindowMetricsTable.TABLE, candidateWindows, windows.sizeMillis());
        List<BackfillBatch.Entry> comparable = new ArrayList<>();
        for (BackfillBatch.Entry e : candidates) {
            if (otherSize.contains(windowOf(e, windows))) {
                notReady.put(
                        e,
                        "stream_window_metrics holds rows of another window size than window.size in its window: the"
                                + " stream job ran with another window.size; delete those stream rows");
            } else {
                comparable.add(e);
            }
        }
        candidateWindows.removeAll(otherSize);
        candidates = comparable;
        if (candidateWindows.isEmpty()) return new ReadyWindows(readyWindows, Computed.empty(), notReady);
        locks.lockWindows(candidateWindows);
        describeJobs(runId, "affected " + candidateWindows.size() + " windows");
        Computed c = Computed.empty();
        // Copies included: whether an event is in the lake does not depend on which copy counts.
        LakeReader lake = new LakeReader(spark, settings.lakePath());
        List<TimeRange> ranges = TimeRange.ofWindows(candidateWindows, windows);
        Dataset<Row> events = lake.read(ranges).persist(StorageLevel.MEMORY_AND_DISK());
        try {
            // A window in an hour that lost files waits (its records in backfill_waiting) until the hour is whole
            // again, or a forced run takes what the lake holds.
            Map<Long, LakeShortfall.Hour> shortHours = new TreeMap<>();
            for (LakeShortfall.Hour h : LakeShortfall.find(conn, ranges, lake::rowsByHour, settings.lakeCheckWait())) {
                shortHours.put(h.startMillis(), h);
            }
            if (!shortHours.isEmpty()) {
                LOG.warn(
                        "run {}: {}{}",
                        runId,
                        LakeShortfall.describe(List.copyOf(shortHours.values())),
                        force ? "; forced: recomputing from what the lake holds" : "; their windows wait");
            }
            Set<String> visible = visibleEvents(events, candidates, windows);
            for (BackfillBatch.Entry e : candidates) {
                long window = windowOf(e, windows);
                LakeShortfall.Hour shortHour = force ? null : shortHourOf(shortHours, window, windows);
                if (shortHour != null) {
                    notReady.put(e, "its lake " + shortHour + " (files lost, or not committed yet)");
                } else if (visible.contains(visibilityKey(e.record().event().eventId, window))) {
                    readyWindows.add(window);
                } else {
                    notReady.put(e, "not in the lake yet");
                }
            }
            if (!readyWindows.isEmpty()) {
                try (WindowAggregation.Recomputed windowRows = WindowAggregation.recompute(
                        events.filter(WindowAggregation.windowStart(LakeLayout.EVENT_TS, windows)
                                .isin(readyWindows.toArray())),
                        windows)) {
                    c = computeAndStage(conn, runId, windowRows.rows(), null);
                }
            }
        } finally {
            events.unpersist();
        }
        return new ReadyWindows(readyWindows, c, notReady);
    }

    /** The short hour that window {@code start} reads from, if any (a window may span two hours). */
    private static LakeShortfall.Hour shortHourOf(
            Map<Long, LakeShortfall.Hour> shortHours, long start, WindowAlignment windows) {
        if (shortHours.isEmpty()) return null;
        long last = start + windows.sizeMillis() - 1;
        for (long h = LakeLayout.hourStart(start); h <= last; h += LakeLayout.HOUR_MILLIS) {
            if (shortHours.containsKey(h)) return shortHours.get(h);
        }
        return null;
    }

    /** What {@link #commitAffected} committed: the replace, and what waits after it. */
    private record AffectedCommit(BatchWindowMetricsTable.ReplaceResult result, BackfillWaitingTable.Summary waiting) {}

    /**
     * Replaces the recomputed windows from staging, keeps the pending records waiting and deletes the settled ones,
     * and finishes the run, in one transaction, with the run's details (records read, skipped, windows, pending
     * records, offsets about to be committed).
     */
    private AffectedCommit commitAffected(
            Connection conn,
            long runId,
            BackfillBatch batch,
            Triage triage,
            ReadyWindows ready,
            Map<BackfillBatch.Entry, String> pending,
            Map<TopicPartition, Long> commits)
            throws SQLException {
        ObjectNode details = ready.computed().details();
        details.put("records_read", batch.entries().size());
        details.put("malformed_skipped", triage.malformed());
        // Where they were, and why: the topic keeps them, so the one who reads this can look at their bytes.
        details.set("malformed_records", malformedJson(batch));
        details.put("expired", triage.expired());
        ArrayNode windowList = details.putArray(BatchRunsTable.DETAILS_WINDOWS);
        ready.windows().forEach(w -> windowList.add(Instant.ofEpochMilli(w).toString()));
        details.set("pending", pendingJson(pending));
        details.set("offsets_to_commit", offsetsJson(commits));
        String topic = settings.backfillTopic();
        InTransaction<BackfillWaitingTable.Summary> waiting = c -> {
            List<BackfillWaitingTable.Waiting> keep = new ArrayList<>();
            pending.forEach((e, why) -> keep.add(
                    new BackfillWaitingTable.Waiting(e.position(), e.record().toJson(), why)));
            BackfillWaitingTable.keep(c, topic, runId, keep);
            List<BackfillWaitingTable.Position> settled = new ArrayList<>();
            for (BackfillBatch.Entry e : batch.entries()) {
                if (e.waiting() && !pending.containsKey(e)) settled.add(e.position());
            }
            details.put("waiting_settled", BackfillWaitingTable.settle(c, topic, settled));
            // Read here, in the transaction: after its commit nothing may fail the run any more.
            return BackfillWaitingTable.summary(c, topic);
        };
        boolean none = ready.windows().isEmpty();
        Committed<BackfillWaitingTable.Summary> done = commitResult(
                conn,
                runId,
                none ? null : new BatchWindowMetricsTable.Windows(List.copyOf(ready.windows())),
                ready.computed(),
                none ? null : ready.windows().first(),
                none ? null : ready.windows().last() + settings.windows().sizeMillis(),
                details,
                false,
                waiting);
        return new AffectedCommit(done.result(), done.also());
    }

    /** A step of a run's own, in the transaction that commits its results; what it returns is handed back. */
    @FunctionalInterface
    private interface InTransaction<T> {
        T run(Connection conn) throws SQLException;
    }

    /** What {@link #commitResult} committed: the replace, and what the run's own step returned (null without one). */
    private record Committed<T>(BatchWindowMetricsTable.ReplaceResult result, T also) {}

    /**
     * Acknowledges the settled records, only now that the results including their events are committed. If this
     * fails the run's result stands; the next run recomputes the same windows again.
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

    /**
     * The outcome of the Spark part of a run, before the replace.
     *
     * @param lakeRowsByHour the lake's rows of each whole hour the computation covered (empty unless asked for)
     */
    private record Computed(
            long rows,
            long events,
            long lakeRows,
            StagingWriter.Path path,
            long computeMillis,
            long stageMillis,
            Map<Long, Long> lakeRowsByHour) {
        static Computed empty() {
            return new Computed(0, 0, 0, StagingWriter.Path.DRIVER, 0, 0, Map.of());
        }

        ObjectNode details() {
            ObjectNode d = JSON.createObjectNode();
            d.put("lake_rows", lakeRows);
            d.put("duplicates_dropped", lakeRows - events);
            d.put("staged_from", path.name().toLowerCase(java.util.Locale.ROOT));
            d.put("compute_ms", computeMillis);
            d.put("stage_ms", stageMillis);
            return d;
        }
    }

    /**
     * Recomputes attribution for {@code range} from the lake (read from one attribution window before it) and loads
     * it into staging for {@code runId}; returns how many rows.
     */
    private long stageAttribution(Connection conn, long runId, TimeRange range, AttributionRule rule)
            throws SQLException {
        LOG.info(
                "run {}: attribution over {} (impressions from {})",
                runId,
                range,
                Instant.ofEpochMilli(rule.earliestImpressionTs(range.fromMillis())));
        Dataset<Row> rows = AttributionAggregation.recompute(
                        new LakeReader(spark, settings.lakePath())
                                .read(List.of(AttributionAggregation.lookback(range, rule))),
                        rule,
                        settings.windows(),
                        range.fromMillis(),
                        range.toMillis())
                .persist(StorageLevel.MEMORY_AND_DISK());
        try {
            long count = rows.count();
            staging.write(
                    StagingWriter.Target.ATTRIBUTION,
                    rows,
                    count,
                    runId,
                    settings.windows().sizeMillis(),
                    conn);
            return count;
        } finally {
            rows.unpersist();
        }
    }

    /**
     * Computes the window rows and loads them into staging for {@code runId}; with {@code countHoursOf}, also sums
     * the lake's rows of each whole hour of that range from the windows (exact when windows nest in hours: an hour's
     * folder holds exactly the events of its windows), which the lake check then needs not count from the files.
     */
    private Computed computeAndStage(Connection conn, long runId, Dataset<Row> windowRows, TimeRange countHoursOf)
            throws SQLException {
        long t0 = System.nanoTime();
        Dataset<Row> windowsAgg = windowRows.persist(StorageLevel.MEMORY_AND_DISK());
        try {
            LOG.info("run {}: aggregating", runId);
            // The totals, per lake hour of the windows' starts: one pass, and what the lake check needs besides.
            Column start = col(WindowAggregation.WINDOW_START);
            List<Row> perHour = windowsAgg
                    .groupBy(start.minus(pmod(start, lit(LakeLayout.HOUR_MILLIS)))
                            .as("hour"))
                    .agg(
                            count(lit(1)),
                            coalesce(sum(col(Metric.EVENTS.column())), lit(0L)),
                            coalesce(sum(col(WindowAggregation.LAKE_ROWS)), lit(0L)))
                    .collectAsList();
            long rows = 0;
            long events = 0;
            long lakeRows = 0;
            Map<Long, Long> lakeRowsOfHour = new TreeMap<>();
            for (Row h : perHour) {
                rows += h.getLong(1);
                events += h.getLong(2);
                lakeRows += h.getLong(3);
                lakeRowsOfHour.put(h.getLong(0), h.getLong(3));
            }
            Map<Long, Long> lakeRowsByHour = countHoursOf == null ? Map.of() : wholeHours(lakeRowsOfHour, countHoursOf);
            long t1 = System.nanoTime();
            LOG.info("run {}: {} events ({} lake rows) in {} window rows; staging them", runId, events, lakeRows, rows);
            StagingWriter.Path path =
                    staging.write(windowsAgg, rows, runId, settings.windows().sizeMillis(), conn);
            long t2 = System.nanoTime();
            return new Computed(
                    rows, events, lakeRows, path, (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, lakeRowsByHour);
        } finally {
            windowsAgg.unpersist();
        }
    }

    /**
     * The lake rows of each whole hour of {@code range}, from the rows of its windows per hour; empty when windows span
     * hours (then an hour's folder is not its windows' events).
     */
    private Map<Long, Long> wholeHours(Map<Long, Long> lakeRowsOfHour, TimeRange range) {
        if (LakeLayout.HOUR_MILLIS % settings.windows().sizeMillis() != 0) return Map.of();
        Map<Long, Long> whole = new TreeMap<>();
        long first = LakeLayout.hourStart(range.fromMillis() + LakeLayout.HOUR_MILLIS - 1);
        for (long h = first; h + LakeLayout.HOUR_MILLIS <= range.toMillis(); h += LakeLayout.HOUR_MILLIS) {
            whole.put(h, lakeRowsOfHour.getOrDefault(h, 0L));
        }
        return whole;
    }

    /**
     * The one transaction: replace the scope from staging and mark the run succeeded, together. With a null
     * scope (nothing to recompute) only the run row is finished.
     */
    private BatchWindowMetricsTable.ReplaceResult commitResult(
            Connection conn,
            long runId,
            BatchWindowMetricsTable.Scope scope,
            Computed c,
            Long rangeFrom,
            Long rangeTo,
            ObjectNode details)
            throws SQLException {
        return commitResult(conn, runId, scope, c, rangeFrom, rangeTo, details, false, null)
                .result();
    }

    /**
     * As above; with {@code attribution}, the staged attribution rows replace the range's in the same transaction,
     * and so does {@code also}'s step, when given, before the run is recorded as succeeded.
     */
    private <T> Committed<T> commitResult(
            Connection conn,
            long runId,
            BatchWindowMetricsTable.Scope scope,
            Computed c,
            Long rangeFrom,
            Long rangeTo,
            ObjectNode details,
            boolean attribution,
            InTransaction<T> also)
            throws SQLException {
        long t0 = System.nanoTime();
        conn.setAutoCommit(false);
        try {
            // The staging table's statistics describe an earlier run's rows (often they say "no rows of this
            // run_id"), and a fresh result table may look tiny: PostgreSQL then plans the vanished-keys anti-join as
            // a nested loop over staging, quadratic in the row count (a full day, 720k keys: over ten minutes
            // instead of 15 s). A hash join is right at every size here. LOCAL: ends with this transaction.
            try (java.sql.Statement s = conn.createStatement()) {
                s.execute("SET LOCAL enable_nestloop = off");
            }
            BatchWindowMetricsTable.ReplaceResult r = scope == null
                    ? BatchWindowMetricsTable.ReplaceResult.NOTHING
                    : BatchWindowMetricsTable.replaceFromStaging(conn, scope, runId);
            if (attribution) {
                BatchWindowMetricsTable.ReplaceResult a = BatchAttributionMetricsTable.replaceFromStaging(
                        conn, (BatchWindowMetricsTable.Range) scope, runId);
                details.put("attribution_rows_written", a.written());
                details.put("attribution_rows_unchanged", a.unchanged());
                details.put("attribution_rows_deleted", a.deleted());
            }
            T alsoReturned = also == null ? null : also.run(conn);
            details.put("window_rows_unchanged", r.unchanged());
            details.put("replace_ms", (System.nanoTime() - t0) / 1_000_000);
            BatchRunsTable.succeed(
                    conn, runId, c.events(), r.written(), r.deleted(), rangeFrom, rangeTo, details.toString());
            conn.commit();
            LOG.info(
                    "run {}: committed {} window rows written, {} unchanged, {} vanished keys deleted",
                    runId,
                    r.written(),
                    r.unchanged(),
                    r.deleted());
            return new Committed<>(r, alsoReturned);
        } catch (SQLException | RuntimeException e) {
            conn.rollback();
            throw e;
        } finally {
            conn.setAutoCommit(true);
        }
    }

    /** Refuses a range ending after the lake's completeness boundary (or when none is recorded) unless forced. */
    private static Optional<Long> requireComplete(Connection conn, long toMillis, boolean force) throws SQLException {
        Optional<Long> until = StreamProgressTable.lakeCompleteUntil(conn);
        if (until.isPresent() && toMillis <= until.get()) return until;
        String why = until.isEmpty()
                ? "no lake completeness recorded yet (the stream job has not committed a checkpoint)"
                : "the lake is complete only until " + Instant.ofEpochMilli(until.get());
        if (!force) {
            throw BackfillException.refusedByBoundary("range ends at " + Instant.ofEpochMilli(toMillis) + " but " + why
                    + "; rerun later, or pass --force to recompute from an incomplete lake");
        }
        LOG.warn("forced: range ends at {} but {}", Instant.ofEpochMilli(toMillis), why);
        return until;
    }

    /**
     * Refuses to recompute from lake hours that hold fewer rows than the stream archived into them ({@link
     * LakeShortfall}): their totals would come out low, and batch wins. {@code archived} was read before the lake;
     * {@code known} holds the hours the recompute already summed, so only the others, and those that look short, are
     * counted from the files. Forced, it goes on and returns them (the run records them); otherwise none is
     * returned. Nothing is replaced before it returns.
     */
    private List<LakeShortfall.Hour> requireLakeHoldsArchived(
            long runId, LakeReader lake, SortedMap<Long, Long> archived, Map<Long, Long> known, boolean force) {
        List<LakeShortfall.Hour> shortHours =
                LakeShortfall.find(archived, known, lake::rowsByHour, settings.lakeCheckWait());
        if (shortHours.isEmpty()) return shortHours;
        String what = shortHours.size() + " lake hour(s) hold fewer rows than the stream archived into them: "
                + LakeShortfall.describe(shortHours);
        if (!force) {
            throw BackfillException.refused(what + ". Their files were lost or deleted, or the stream job has not"
                    + " committed them yet: start it if it is down, restore the files, or pass --force to recompute"
                    + " from what the lake holds (docs/operations.md, \"The lake lost files\")");
        }
        LOG.warn("run {}: forced: {}", runId, what);
        return shortHours;
    }

    /** Refuses a range whose stream rows have another window size than this run's (they could never match). */
    private void requireStreamWindowSize(Connection conn, long fromMillis, long toMillis) throws SQLException {
        Optional<String> why = WindowSizes.mismatch(
                conn,
                StreamWindowMetricsTable.TABLE,
                fromMillis,
                toMillis,
                settings.windows().sizeMillis());
        if (why.isPresent()) throw BackfillException.refused(why.get());
    }

    /** Where lake.retention has deleted the lake up to, if it ever did. */
    private Optional<Long> retentionHorizon() {
        try {
            return LakeRetention.horizon(
                    LakeStorage.open(settings.lakePath(), spark.sparkContext().hadoopConfiguration()));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(
                    "cannot read the lake's retention horizon at " + settings.lakePath() + ": " + e.getMessage(), e);
        }
    }

    /** Which candidate events are in the lake now, in the window their backfill record names. */
    private Set<String> visibleEvents(
            Dataset<Row> events, List<BackfillBatch.Entry> candidates, WindowAlignment windows) {
        StructType schema =
                new StructType().add("wanted_id", DataTypes.StringType).add("wanted_window", DataTypes.LongType);
        List<Row> wanted = new ArrayList<>();
        for (BackfillBatch.Entry e : candidates)
            wanted.add(RowFactory.create(e.record().event().eventId, windowOf(e, windows)));
        Dataset<Row> wantedDf = functions.broadcast(spark.createDataFrame(wanted, schema));
        Dataset<Row> inLake = events.select(
                col(LakeLayout.EVENT_ID),
                WindowAggregation.windowStart(LakeLayout.EVENT_TS, windows).as(WindowAggregation.WINDOW_START));
        Dataset<Row> present = inLake.join(
                wantedDf,
                inLake.col(LakeLayout.EVENT_ID)
                        .equalTo(wantedDf.col("wanted_id"))
                        .and(inLake.col(WindowAggregation.WINDOW_START).equalTo(wantedDf.col("wanted_window"))),
                "left_semi");
        Set<String> visible = new HashSet<>();
        for (Row r : present.collectAsList()) visible.add(visibilityKey(r.getString(0), r.getLong(1)));
        return visible;
    }

    private static String visibilityKey(String eventId, long windowStart) {
        return windowStart + "/" + eventId;
    }

    /** The window an event belongs to by the batch layer's own window definition. */
    private static long windowOf(BackfillBatch.Entry e, WindowAlignment windows) {
        AdEvent event = e.record().event();
        return windows.windowStart(event.eventTs);
    }

    private void describeJobs(long runId, String what) {
        spark.sparkContext()
                .setJobGroup("recount-backfill-run-" + runId, "recount backfill run " + runId + ": " + what, false);
    }

    private static ArrayNode pendingJson(Map<BackfillBatch.Entry, String> pending) {
        ArrayNode list = JSON.createArrayNode();
        pending.entrySet().stream().limit(MAX_RECORDS_LISTED_IN_DETAILS).forEach(p -> {
            ObjectNode n = list.addObject();
            n.put("topic", p.getKey().partition().topic());
            n.put("partition", p.getKey().partition().partition());
            n.put("offset", p.getKey().offset());
            n.put("event_id", p.getKey().record().event().eventId);
            n.put("reason", p.getValue());
        });
        return list;
    }

    private static ArrayNode malformedJson(BackfillBatch batch) {
        ArrayNode list = JSON.createArrayNode();
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
        ObjectNode n = JSON.createObjectNode();
        commits.forEach((tp, o) -> n.put(tp.toString(), o));
        return n;
    }

    /**
     * Records the run (holding its liveness lock until {@link RunLocks#close}) and fails the runs whose process
     * died without finishing: without that they would stay "running" forever, with their staged rows.
     */
    private static long startRun(Connection conn, Mode mode, Long fromMillis, Long toMillis, boolean force)
            throws SQLException {
        long runId = BatchRunsTable.start(conn, mode, fromMillis, toMillis, force);
        List<Long> abandoned = BatchRunsTable.failAbandoned(conn, runId);
        if (!abandoned.isEmpty()) {
            LOG.warn(
                    "run {}: marked runs {} failed: their process ended without finishing (killed?); their staged"
                            + " rows are dropped, their previous results were never touched",
                    runId,
                    abandoned);
        }
        return runId;
    }

    /** Rolls back, drops the run's staging rows and records the error; never hides the original failure. */
    private static void recordFailure(Connection conn, long runId, Throwable failure) {
        try {
            if (!conn.getAutoCommit()) {
                conn.rollback();
                conn.setAutoCommit(true);
            }
            BatchWindowMetricsTable.clearStaging(conn, runId);
            BatchAttributionMetricsTable.clearStaging(conn, runId);
            BatchRunsTable.fail(conn, runId, oneLine(failure));
        } catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
        LOG.error("run {} failed: {}", runId, oneLine(failure));
    }

    static String oneLine(Throwable t) {
        String m = t.getMessage();
        if (m == null || m.isBlank()) m = t.getClass().getSimpleName();
        int nl = m.indexOf('\n');
        return nl > 0 ? m.substring(0, nl) : m;
    }

    private static String seconds(Duration d) {
        return String.format(java.util.Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }
}
