package dev.recount.batch;

import dev.recount.core.lake.LakeLayout;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
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
        Path tmp = new Path(target.getParent(), "." + target.getName() + ".tmp");
        try (var out = fs.create(tmp, true)) {
            out.write(content);
        }
        if (!fs.rename(tmp, target)) {
            fs.delete(tmp, false);
            throw new IOException("cannot rename " + tmp + " to " + target);
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
