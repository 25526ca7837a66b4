package dev.recount.batch;

import dev.recount.core.lake.LakeLayout;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFileSystem;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The lake's directories and files as the batch layer maintains them, through Hadoop's FileSystem (local,
 * {@code hdfs://}, {@code s3a://}).
 *
 * <p>What is data: every visible file (name not starting with '.' or '_') in an hour directory — exactly what
 * Spark reads. Hidden files are the stream job's in-progress files and are never touched. recount's own
 * bookkeeping lives under {@code <lake>/_recount/} ({@link #CONTROL_DIR}): compaction journals, staged compacted
 * files and the retention horizon. Spark skips it ('_'), and it holds no {@code *.parquet} file that a
 * {@code <lake>/**}{@code /*.parquet} glob (DuckDB) would pick up.
 *
 * <p>On a local lake the writes go to the raw file system: Hadoop's checksummed local file system would leave a
 * {@code .crc} file beside every file it writes, which the stream job's files do not have either.
 *
 * <p><b>Durability.</b> A swap (compaction) or a deletion (retention) is decided by a small control file and then
 * carried out by renames and deletes; after a crash of the host, not only of the process, the decision must be on
 * disk with its content before any of its steps is, and each step before the next. Files written here are synced
 * before they are closed ({@code hsync}), and on a local lake the directories whose entries changed are synced too
 * ({@link #syncDirectory}): without that, a power loss can leave a renamed file empty or a delete on disk before the
 * rename it depended on. HDFS and object stores make a completed rename or delete durable themselves.
 */
final class LakeStorage {
    static final String CONTROL_DIR = "_recount";

    private final FileSystem fs;
    private final Path base;

    private LakeStorage(FileSystem fs, Path base) {
        this.fs = fs;
        this.base = base;
    }

    /** The lake at {@code lakePath}; it must exist (a missing lake is a wrong lake.path, never "no events"). */
    static LakeStorage open(String lakePath, Configuration conf) {
        Path p = new Path(lakePath);
        try {
            FileSystem fs = p.getFileSystem(conf);
            if (fs instanceof ChecksumFileSystem checksummed) fs = checksummed.getRawFileSystem();
            Path base = fs.makeQualified(p);
            if (!fs.exists(base)) {
                throw new IllegalStateException(
                        "the lake " + lakePath + " does not exist (setting lake.path or --lake)");
            }
            return new LakeStorage(fs, base);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the lake at " + lakePath + ": " + e.getMessage(), e);
        }
    }

    FileSystem fs() {
        return fs;
    }

    Path base() {
        return base;
    }

    Path hourDirectory(LakeHour hour) {
        return new Path(base, hour.relativePath());
    }

    Path controlDirectory(String name) {
        return new Path(new Path(base, CONTROL_DIR), name);
    }

    /** The dates that have an {@code event_date=} directory, oldest first. */
    List<LocalDate> dates() throws IOException {
        List<LocalDate> dates = new ArrayList<>();
        for (FileStatus s : fs.listStatus(base)) {
            if (s.isDirectory()) LakeHour.parseDate(s.getPath().getName()).ifPresent(dates::add);
        }
        dates.sort(Comparator.naturalOrder());
        return dates;
    }

    /** The hours of {@code date} that have a directory, in order. */
    List<LakeHour> hours(LocalDate date) throws IOException {
        Path dateDir = new Path(base, LakeLayout.DATE_PARTITION + "=" + date);
        List<LakeHour> hours = new ArrayList<>();
        for (FileStatus s : listOrEmpty(dateDir)) {
            if (s.isDirectory())
                LakeHour.parse(dateDir.getName(), s.getPath().getName()).ifPresent(hours::add);
        }
        hours.sort(Comparator.naturalOrder());
        return hours;
    }

    /** The data files of an hour (what readers read), by name. */
    List<FileStatus> dataFiles(LakeHour hour) throws IOException {
        List<FileStatus> files = new ArrayList<>();
        for (FileStatus s : listOrEmpty(hourDirectory(hour))) {
            if (s.isFile() && !isHidden(s.getPath().getName())) files.add(s);
        }
        files.sort(Comparator.comparing(s -> s.getPath().getName()));
        return files;
    }

    /** The hidden files of an hour: a stream job's files in progress (or left by a job that lost its state). */
    List<FileStatus> hiddenFiles(LakeHour hour) throws IOException {
        List<FileStatus> files = new ArrayList<>();
        for (FileStatus s : listOrEmpty(hourDirectory(hour))) {
            if (isHidden(s.getPath().getName())) files.add(s);
        }
        return files;
    }

    /** Removes the hour's directory if nothing is left in it, then its date's directory likewise. */
    void removeIfEmpty(LakeHour hour) throws IOException {
        Path hourDir = hourDirectory(hour);
        if (fs.exists(hourDir) && fs.listStatus(hourDir).length == 0) fs.delete(hourDir, false);
        Path dateDir = hourDir.getParent();
        if (fs.exists(dateDir) && fs.listStatus(dateDir).length == 0) fs.delete(dateDir, false);
    }

    List<FileStatus> listOrEmpty(Path dir) throws IOException {
        try {
            return List.of(fs.listStatus(dir));
        } catch (FileNotFoundException e) {
            return List.of();
        }
    }

    /** Writes {@code content} to {@code target} so that readers see all of it or nothing (temporary file, rename). */
    void writeAtomically(Path target, byte[] content) throws IOException {
        Path tmp = new Path(target.getParent(), temporaryName(target.getName()));
        try (var out = fs.create(tmp, true)) {
            out.write(content);
            out.hsync();
        }
        if (!fs.rename(tmp, target)) {
            fs.delete(tmp, false);
            throw new IOException("cannot rename " + tmp + " to " + target);
        }
        syncDirectory(target.getParent());
    }

    /**
     * The hidden name {@link #writeAtomically} writes {@code name} under before renaming it: a process killed in
     * between leaves it behind.
     */
    static String temporaryName(String name) {
        return "." + name + ".tmp";
    }

    /** The name whose {@link #temporaryName} {@code name} is, if it is one. */
    static Optional<String> nameOfTemporary(String name) {
        if (name.length() <= ".tmp".length() + 1 || !name.startsWith(".") || !name.endsWith(".tmp")) {
            return Optional.empty();
        }
        String original = name.substring(1, name.length() - ".tmp".length());
        return temporaryName(original).equals(name) ? Optional.of(original) : Optional.empty();
    }

    /**
     * Makes the entries of {@code dir} (files created, renamed in or out, deleted) and of the directories above it
     * up to the lake's root survive a crash of the host. Only a local lake needs it; elsewhere it does nothing.
     */
    void syncDirectory(Path dir) throws IOException {
        if (!(fs instanceof RawLocalFileSystem local)) return;
        String root = base.toUri().getPath();
        for (Path d = fs.makeQualified(dir); d != null; d = d.getParent()) {
            try (FileChannel channel = FileChannel.open(local.pathToFile(d).toPath(), StandardOpenOption.READ)) {
                channel.force(true);
            }
            if (d.toUri().getPath().equals(root)) break;
        }
    }

    Optional<byte[]> readIfExists(Path file) throws IOException {
        try (var in = fs.open(file)) {
            return Optional.of(in.readAllBytes());
        } catch (FileNotFoundException e) {
            return Optional.empty();
        }
    }

    /** Spark's rule: names starting with '.' or '_' are not data (in-progress files, markers, bookkeeping). */
    static boolean isHidden(String name) {
        return name.startsWith(".") || name.startsWith("_");
    }
}
