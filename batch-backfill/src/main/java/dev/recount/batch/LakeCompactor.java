package dev.recount.batch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.lake.LakeLayout;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.window.WindowAlignment;
import dev.recount.db.tables.StreamProgressTable;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code backfill compact}: rewrites the small files of complete lake hours into a few large ones, and applies
 * {@code lake.retention}.
 *
 * <p><b>Which hours.</b> Those whose start falls in the requested range and that end at or before the lake's
 * completeness boundary ({@code stream_progress.lake_complete_until}): the stream job has committed everything
 * on time for them. Late events may still add files later; the next compaction of the hour folds them in. An
 * hour is rewritten when it holds at least two <em>small</em> files (under half of
 * {@code lake.compaction.target-file-size}); files at least that large are left alone, so compacting a compacted
 * hour again does nothing. Hidden files (the stream job's files in progress) are never touched.
 *
 * <p><b>How, atomically.</b> Per day, under the batch layer's advisory lock for that day ({@link RunLocks}, the one
 * every backfill holds while it reads the day — so no backfill reads an hour while it is swapped):
 * <ol>
 *   <li>the day's interrupted swaps are finished ({@link CompactionJournal#finishInterrupted});</li>
 *   <li>Spark tasks write the compacted files, hidden, under {@code <lake>/_recount/staging/<date>/} and check
 *       them (row count against the inputs' footers), synced to disk;</li>
 *   <li>per hour, a journal naming the outputs and the small files they replace is written — the commit point —
 *       then each output is renamed into the hour directory and the small files are deleted, then the journal.</li>
 * </ol>
 * A crash before the journal is in place leaves only hidden staged files and perhaps the journal's temporary file
 * (both dropped by the next run); after it, the next run —
 * or a backfill about to read the hour — finishes the swap from the journal. At no point is an event missing from
 * the visible files: the outputs appear before the files they replace go. What other readers can see (plain
 * Spark or DuckDB over the lake, who take no lock) is described in batch-backfill/README.md.
 */
public final class LakeCompactor {
    private static final Logger LOG = LoggerFactory.getLogger(LakeCompactor.class);
    static final String STAGING = "staging";
    static final String COMPACTED_PREFIX = "part-compacted-";
    private static final DateTimeFormatter GENERATION_TIME =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss").withZone(ZoneOffset.UTC);

    private final SparkSession spark;
    private final DataSource db;
    private final BackfillSettings settings;
    private final Clock clock;
    private final Duration progressInterval;

    public LakeCompactor(
            SparkSession spark, DataSource db, BackfillSettings settings, Clock clock, Duration progressInterval) {
        this.spark = spark;
        this.db = db;
        this.settings = settings;
        this.clock = clock;
        this.progressInterval = progressInterval;
    }

    /** What one compaction run did. */
    public record Report(
            TimeRange range,
            int hoursChecked,
            int hoursCompacted,
            int alreadyCompact,
            int notComplete,
            long filesReplaced,
            long filesWritten,
            long rows,
            int interruptedFinished,
            Map<String, String> failed,
            LakeRetention.Outcome retention,
            Duration elapsed) {
        public String summary() {
            return "compact " + range + ": " + hoursChecked + " hours, " + hoursCompacted + " compacted ("
                    + filesReplaced + " files into " + filesWritten + ", " + rows + " rows), " + alreadyCompact
                    + " already compact, " + notComplete + " not complete yet, " + failed.size() + " failed"
                    + (interruptedFinished > 0 ? "; " + interruptedFinished + " interrupted compactions finished" : "")
                    + "; " + retention.summary() + "; "
                    + String.format(java.util.Locale.ROOT, "%.1f s", elapsed.toMillis() / 1000.0);
        }

        /** The facts of {@link #summary()} for {@code --json}. */
        public ObjectNode json() {
            ObjectNode json = JsonOutput.object();
            json.put("mode", "compact");
            json.put("from", Instant.ofEpochMilli(range.fromMillis()).toString());
            json.put("to", Instant.ofEpochMilli(range.toMillis()).toString());
            json.put("hours_checked", hoursChecked);
            json.put("hours_compacted", hoursCompacted);
            json.put("files_replaced", filesReplaced);
            json.put("files_written", filesWritten);
            json.put("rows", rows);
            json.put("already_compact", alreadyCompact);
            json.put("not_complete", notComplete);
            json.put("interrupted_finished", interruptedFinished);
            ObjectNode failures = json.putObject("failed");
            failed.forEach(failures::put);
            json.set("retention", retention.json());
            json.put("duration_ms", elapsed.toMillis());
            return json;
        }
    }

    /** One hour to rewrite: its small files, split into tasks of about the target size each. */
    private record HourPlan(
            LakeHour hour,
            List<FileStatus> inputs,
            List<HourRewrite.Task> tasks,
            List<CompactionJournal.Output> outputs) {}

    /** Compacts the complete hours whose start falls in {@code range}, then applies retention. */
    public Report compact(TimeRange range) throws SQLException, IOException {
        long started = System.nanoTime();
        LakeStorage lake =
                LakeStorage.open(settings.lakePath(), spark.sparkContext().hadoopConfiguration());
        Tally tally = new Tally();
        LakeRetention.Outcome retention;
        try (Connection conn = db.getConnection();
                ProgressReporter progress = ProgressReporter.start(spark, "compact", progressInterval)) {
            long until = requireComplete(conn, range);
            List<LocalDate> existing = lake.dates();
            for (LocalDate date : LakeLayout.datesCovering(range.fromMillis(), range.toMillis())) {
                if (!existing.contains(date)) continue;
                List<LakeHour> hours = new ArrayList<>();
                for (LakeHour h : lake.hours(date)) {
                    if (range.contains(h.startMillis())) hours.add(h);
                }
                if (hours.isEmpty()) continue;
                try (RunLocks locks = RunLocks.on(conn, settings.postgres().schema(), settings.lockTimeout())) {
                    locks.lockRange(lockRange(date, settings.sets()), settings.shortestWindow());
                    compactDay(lake, date, hours, until, tally);
                }
            }
            Optional<Duration> keep = settings.retention();
            retention = keep.isPresent()
                    ? LakeRetention.apply(conn, lake, settings, keep.get(), until, clock)
                    : LakeRetention.Outcome.off();
        }
        return new Report(
                range,
                tally.checked,
                tally.compacted,
                tally.alreadyCompact,
                tally.notComplete,
                tally.filesReplaced,
                tally.filesWritten,
                tally.rows,
                tally.interrupted,
                tally.failed,
                retention,
                Duration.ofNanos(System.nanoTime() - started));
    }

    private static final class Tally {
        int checked;
        int compacted;
        int alreadyCompact;
        int notComplete;
        long filesReplaced;
        long filesWritten;
        long rows;
        int interrupted;
        final Map<String, String> failed = new LinkedHashMap<>();
    }

    private void compactDay(LakeStorage lake, LocalDate date, List<LakeHour> hours, long until, Tally tally)
            throws IOException {
        tally.interrupted += CompactionJournal.finishInterrupted(lake, date);
        Path staging = new Path(lake.controlDirectory(STAGING), date.toString());
        // Leftovers of a run that died before its journal was in place: nothing refers to them.
        lake.fs().delete(staging, true);
        int undecided = CompactionJournal.dropUndecided(lake, date);
        if (undecided > 0) LOG.info("dropped {} undecided compaction journals of {}", undecided, date);

        String generation = GENERATION_TIME.format(clock.instant()) + "-"
                + UUID.randomUUID().toString().substring(0, 8);
        long small = settings.compactionTargetFileBytes() / 2;
        List<HourPlan> plans = new ArrayList<>();
        for (LakeHour hour : hours) {
            tally.checked++;
            if (hour.endMillis() > until) {
                tally.notComplete++;
                continue;
            }
            List<FileStatus> inputs = new ArrayList<>();
            for (FileStatus f : lake.dataFiles(hour)) {
                if (f.getLen() < small) inputs.add(f);
            }
            if (inputs.size() < 2) {
                tally.alreadyCompact++;
                continue;
            }
            plans.add(plan(hour, inputs, staging, generation, lake));
        }
        if (plans.isEmpty()) return;

        List<HourRewrite.Task> tasks = new ArrayList<>();
        plans.forEach(p -> tasks.addAll(p.tasks()));
        LOG.info(
                "compacting {} hours of {}: {} small files into {} files",
                plans.size(),
                date,
                plans.stream().mapToInt(p -> p.inputs().size()).sum(),
                tasks.size());
        spark.sparkContext().setJobGroup("recount-compact-" + date, "recount compact " + date, false);
        List<HourRewrite.Result> results = JavaSparkContext.fromSparkContext(spark.sparkContext())
                .parallelize(tasks, tasks.size())
                .map(rewrite(hadoopSettings(spark.sparkContext().hadoopConfiguration())))
                .collect();
        // The staged files were synced by their tasks; their names must be on disk too before a journal names them.
        lake.syncDirectory(staging);
        Map<String, List<HourRewrite.Result>> byHour = new HashMap<>();
        for (HourRewrite.Result r : results)
            byHour.computeIfAbsent(r.hourId(), k -> new ArrayList<>()).add(r);

        for (HourPlan plan : plans) {
            List<HourRewrite.Result> done = byHour.getOrDefault(plan.hour().id(), List.of());
            Optional<String> error = done.stream()
                    .map(HourRewrite.Result::error)
                    .filter(e -> e != null)
                    .findFirst();
            if (error.isPresent() || done.size() != plan.tasks().size()) {
                String why = error.orElse("a rewrite task returned no result");
                tally.failed.put(plan.hour().toString(), why);
                LOG.error("compaction of {} failed, its files are left as they were: {}", plan.hour(), why);
                for (HourRewrite.Task t : plan.tasks()) lake.fs().delete(new Path(t.staged()), false);
                continue;
            }
            long rows = done.stream().mapToLong(HourRewrite.Result::rows).sum();
            CompactionJournal journal = new CompactionJournal(
                    plan.hour().id(),
                    generation,
                    plan.outputs(),
                    plan.inputs().stream().map(f -> f.getPath().getName()).toList(),
                    rows);
            journal.write(lake);
            journal.finish(lake);
            tally.compacted++;
            tally.filesReplaced += plan.inputs().size();
            tally.filesWritten += plan.outputs().size();
            tally.rows += rows;
            LOG.info(
                    "compacted {}: {} files into {} ({} rows)",
                    plan.hour(),
                    plan.inputs().size(),
                    plan.outputs().size(),
                    rows);
        }
        lake.fs().delete(staging, true);
    }

    /**
     * Splits an hour's small files into outputs of about the target size (whole files each, in name order), so a
     * busy hour becomes a few large files and a quiet one a single file.
     */
    private HourPlan plan(LakeHour hour, List<FileStatus> inputs, Path staging, String generation, LakeStorage lake) {
        long total = inputs.stream().mapToLong(FileStatus::getLen).sum();
        long target = settings.compactionTargetFileBytes();
        int outputs = (int) Math.max(1, Math.min(inputs.size(), (total + target - 1) / target));
        long perOutput = Math.max(1, total / outputs);
        List<List<String>> bins = new ArrayList<>();
        List<String> current = new ArrayList<>();
        long currentBytes = 0;
        for (FileStatus f : inputs) {
            current.add(f.getPath().toString());
            currentBytes += f.getLen();
            if (currentBytes >= perOutput && bins.size() < outputs - 1) {
                bins.add(current);
                current = new ArrayList<>();
                currentBytes = 0;
            }
        }
        if (!current.isEmpty()) bins.add(current);

        List<HourRewrite.Task> tasks = new ArrayList<>();
        List<CompactionJournal.Output> outs = new ArrayList<>();
        for (int i = 0; i < bins.size(); i++) {
            Path staged = new Path(staging, hour.id() + "-" + generation + "-" + i + ".parquet.staged");
            tasks.add(new HourRewrite.Task(hour.id(), bins.get(i), staged.toString()));
            outs.add(new CompactionJournal.Output(
                    relative(lake, staged), COMPACTED_PREFIX + generation + "-" + i + ".parquet"));
        }
        return new HourPlan(hour, inputs, tasks, outs);
    }

    /**
     * The advisory locks that keep backfills away from a UTC date's hours: the days of every window of every metric
     * set that may hold events of the date (with windows that do not divide a day, the window open at midnight started
     * the day before).
     */
    static TimeRange lockRange(LocalDate date, MetricSets sets) {
        TimeRange all = null;
        for (MetricSet s : sets.sets()) {
            TimeRange r = lockRange(date, s.windows());
            all = all == null
                    ? r
                    : new TimeRange(Math.min(all.fromMillis(), r.fromMillis()), Math.max(all.toMillis(), r.toMillis()));
        }
        if (all == null) throw new IllegalStateException("no metric set is declared");
        return all;
    }

    /** {@link #lockRange(LocalDate, MetricSets)} for windows of one size. */
    static TimeRange lockRange(LocalDate date, WindowAlignment windows) {
        long start = date.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        long end = date.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        return new TimeRange(windows.windowStart(start), windows.windowEnd(end - 1));
    }

    /** The completeness boundary; refuses (exit 3) when none is recorded or the range starts beyond it. */
    private static long requireComplete(Connection conn, TimeRange range) throws SQLException {
        Optional<Long> until = StreamProgressTable.lakeCompleteUntil(conn);
        if (until.isEmpty()) {
            throw BackfillException.refusedByBoundary("no lake completeness recorded yet (the stream job has not"
                    + " committed a checkpoint): no hour is known to be complete, so none is compacted");
        }
        if (range.fromMillis() >= until.get()) {
            throw BackfillException.refusedByBoundary("range " + range + " starts at or beyond the lake's completeness"
                    + " boundary " + Instant.ofEpochMilli(until.get()) + ": no hour in it is complete yet");
        }
        return until.get();
    }

    private static String relative(LakeStorage lake, Path p) {
        return lake.base().toUri().relativize(p.toUri()).getPath();
    }

    /** The function the Spark tasks run; static, so the closure holds only the settings map. */
    private static Function<HourRewrite.Task, HourRewrite.Result> rewrite(Map<String, String> hadoopSettings) {
        return task -> HourRewrite.run(task, hadoopSettings);
    }

    /** The session's Hadoop settings (file systems, credentials providers), for the tasks to open the lake with. */
    private static Map<String, String> hadoopSettings(Configuration conf) {
        Map<String, String> m = new HashMap<>();
        for (Map.Entry<String, String> e : conf) m.put(e.getKey(), e.getValue());
        return m;
    }
}
