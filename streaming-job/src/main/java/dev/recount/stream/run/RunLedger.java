package dev.recount.stream.run;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runs of the job in {@code stream.checkpoint-dir}, and the decision where the next one starts.
 *
 * <p>Layout (Flink's own, plus one file per run): {@code <dir>/<job-id>/chk-<n>/_metadata} (retained checkpoints),
 * {@code <dir>/<job-id>/savepoint-*&#47;_metadata} (stop-with-savepoint on SIGTERM) and
 * {@code <dir>/<job-id>/recount-run.properties} ({@link RunRecord}). A snapshot is complete once its
 * {@code _metadata} exists: Flink writes that file last.
 *
 * <p>Uses Flink's file systems, so the directory may be local, {@code s3a://} or {@code hdfs://}.
 */
public final class RunLedger {
    private static final Logger LOG = LoggerFactory.getLogger(RunLedger.class);
    static final String RECORD_FILE = "recount-run.properties";
    private static final String METADATA = "_metadata";

    private final Path root;

    public RunLedger(URI checkpointDir) {
        this.root = new Path(checkpointDir);
    }

    /** One run found on disk. */
    /** @param snapshots the run's complete snapshots, newest first */
    public record Run(JobID jobId, RunRecord record, List<Snapshot> snapshots) {
        public Optional<Snapshot> latestSnapshot() {
            return snapshots.stream().findFirst();
        }

        /** The chain of runs this one belongs to; runs noted by older versions are their own. */
        public String lineage() {
            return record.lineage() != null ? record.lineage() : jobId.toHexString();
        }
    }

    public record Snapshot(String path, long modifiedAt, long checkpointNumber) {}

    public Path jobDirectory(JobID jobId) {
        return new Path(root, jobId.toHexString());
    }

    /** Runs with a readable record, newest start first. */
    public List<Run> runs() throws IOException {
        FileSystem fs = root.getFileSystem();
        List<Run> runs = new ArrayList<>();
        if (!fs.exists(root)) return runs;
        for (FileStatus dir : list(fs, root)) {
            if (!dir.isDir()) continue;
            JobID jobId;
            try {
                jobId = JobID.fromHexString(dir.getPath().getName());
            } catch (IllegalArgumentException e) {
                continue;
            }
            Path recordFile = new Path(dir.getPath(), RECORD_FILE);
            if (!fs.exists(recordFile)) {
                LOG.warn("ignoring {}: no {} (not started by `stream`)", dir.getPath(), RECORD_FILE);
                continue;
            }
            RunRecord record;
            try {
                record = RunRecord.fromProperties(read(fs, recordFile));
            } catch (RuntimeException e) {
                LOG.warn("ignoring {}: unreadable {}: {}", dir.getPath(), RECORD_FILE, e.getMessage());
                continue;
            }
            runs.add(new Run(jobId, record, snapshots(fs, dir.getPath())));
        }
        runs.sort(Comparator.comparingLong((Run r) -> r.record().startedAt()).reversed());
        return runs;
    }

    /**
     * Where a run in the given mode starts.
     *
     * @throws IllegalStateException with a one-line reason when the previous run cannot be resumed this way
     */
    public ResumePlan plan(boolean bounded, String inputTopic, Map<String, Long> setWindowMillis) throws IOException {
        for (Run run : runs()) {
            RunRecord r = run.record();
            if (!r.finished() && run.latestSnapshot().isEmpty()) {
                // Failed before its first checkpoint: it left nothing visible (every output commits with a
                // checkpoint), so the run before it is the one to resume.
                continue;
            }
            if (!r.inputTopic().equals(inputTopic)) {
                throw new IllegalStateException("the checkpoints in " + root + " are for input topic '" + r.inputTopic()
                        + "', not '" + inputTopic
                        + "'; use --from-earliest to start over, or another stream.checkpoint-dir");
            }
            for (Map.Entry<String, Long> w : setWindowMillis.entrySet()) {
                Long then = r.setWindowMillis().get(w.getKey());
                if (then != null && !then.equals(w.getValue())) {
                    throw new IllegalStateException("the checkpoints in " + root + " were taken with " + then
                            + " ms windows of metric set " + w.getKey() + ", not " + w.getValue()
                            + " ms; to start over with the new size, use a fresh schema (postgres.schema) and"
                            + " --from-earliest: rows of two sizes in one schema count twice");
                }
            }
            if (r.finished()) {
                // Fresh state, and checkpoint and batch numbers that start again: a new lineage.
                return new ResumePlan(
                        ResumePlan.Kind.CONTINUE_AFTER_BOUNDED,
                        run.jobId(),
                        null,
                        r.stopOffsets(),
                        Math.max(r.closedUntil(), r.finalClosedUntil()),
                        null,
                        List.of(),
                        ResumePlan.newLineage());
            }
            if (r.bounded() && !bounded) {
                // The Kafka source drops partitions it finished from its checkpoint; an unbounded run restored from
                // it would never read them again.
                throw new IllegalStateException("the last run was `stream --bounded` and did not finish; finish it "
                        + "with `stream --bounded`, or start over with --from-earliest");
            }
            List<String> paths = run.snapshots().stream().map(Snapshot::path).toList();
            return new ResumePlan(
                    ResumePlan.Kind.RESTORE,
                    run.jobId(),
                    paths.get(0),
                    Map.of(),
                    r.closedUntil(),
                    r.bounded() ? r.stopOffsets() : null,
                    paths.subList(1, paths.size()),
                    run.lineage());
        }
        return ResumePlan.fresh();
    }

    /** Notes a run before it is submitted, so a checkpoint can never exist without its record. */
    public void recordStart(JobID jobId, RunRecord record) throws IOException {
        write(jobDirectory(jobId), record);
    }

    public void recordFinished(JobID jobId, long finalClosedUntil) throws IOException {
        FileSystem fs = root.getFileSystem();
        Path dir = jobDirectory(jobId);
        RunRecord record = RunRecord.fromProperties(read(fs, new Path(dir, RECORD_FILE)));
        write(dir, record.finishedWith(finalClosedUntil));
    }

    /**
     * Deletes every run directory except {@code keep}: once the run to resume is chosen, older runs can never be
     * chosen again. Safe if the new run fails early: it is skipped until it has a checkpoint.
     */
    public void pruneAllExcept(JobID... keep) throws IOException {
        FileSystem fs = root.getFileSystem();
        List<String> kept = new ArrayList<>();
        for (JobID k : keep) if (k != null) kept.add(k.toHexString());
        for (Run run : runs()) {
            if (kept.contains(run.jobId().toHexString())) continue;
            LOG.info("deleting superseded run {}", jobDirectory(run.jobId()));
            fs.delete(jobDirectory(run.jobId()), true);
        }
    }

    /** --from-earliest: forget every run. */
    public void discardAll() throws IOException {
        FileSystem fs = root.getFileSystem();
        if (!fs.exists(root)) return;
        for (FileStatus s : list(fs, root)) {
            if (!s.isDir()) continue;
            try {
                JobID.fromHexString(s.getPath().getName());
            } catch (IllegalArgumentException e) {
                continue; // not ours
            }
            fs.delete(s.getPath(), true);
        }
    }

    /** The run of {@code jobId}, for the job it restores from. */
    public Optional<Run> run(JobID jobId) throws IOException {
        return runs().stream().filter(r -> r.jobId().equals(jobId)).findFirst();
    }

    /** Complete snapshots (their {@code _metadata} exists), newest first. */
    private static List<Snapshot> snapshots(FileSystem fs, Path jobDir) throws IOException {
        List<Snapshot> snapshots = new ArrayList<>();
        for (FileStatus s : list(fs, jobDir)) {
            String name = s.getPath().getName();
            if (!s.isDir() || !(name.startsWith("chk-") || name.startsWith("savepoint-"))) continue;
            Path metadata = new Path(s.getPath(), METADATA);
            if (!fs.exists(metadata)) continue;
            long modified = fs.getFileStatus(metadata).getModificationTime();
            long number = name.startsWith("chk-") ? parseOr(name.substring(4)) : Long.MAX_VALUE;
            snapshots.add(new Snapshot(s.getPath().toString(), modified, number));
        }
        snapshots.sort(Comparator.comparingLong(Snapshot::modifiedAt)
                .thenComparingLong(Snapshot::checkpointNumber)
                .reversed());
        return snapshots;
    }

    private static long parseOr(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static FileStatus[] list(FileSystem fs, Path dir) throws IOException {
        FileStatus[] statuses = fs.listStatus(dir);
        return statuses == null ? new FileStatus[0] : statuses;
    }

    private static String read(FileSystem fs, Path file) throws IOException {
        try (InputStream in = fs.open(file)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toString(StandardCharsets.UTF_8);
        }
    }

    /** Write-then-rename, so a crash mid-write leaves the previous record (or none), never half of one. */
    private static void write(Path dir, RunRecord record) throws IOException {
        FileSystem fs = dir.getFileSystem();
        fs.mkdirs(dir);
        Path tmp = new Path(dir, RECORD_FILE + ".tmp");
        try (OutputStream out = fs.create(tmp, FileSystem.WriteMode.OVERWRITE)) {
            out.write(record.toProperties().getBytes(StandardCharsets.UTF_8));
        }
        Path target = new Path(dir, RECORD_FILE);
        // POSIX rename replaces the target atomically; file systems whose rename refuses an existing target
        // (object stores) get delete + rename, with a short window where the record is missing.
        if (fs.rename(tmp, target)) return;
        fs.delete(target, false);
        if (!fs.rename(tmp, target)) throw new IOException("cannot rename " + tmp + " to " + target);
    }
}
