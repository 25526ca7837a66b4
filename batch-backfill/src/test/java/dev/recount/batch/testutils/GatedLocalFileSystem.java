package dev.recount.batch.testutils;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The local file system, stopping a process for good at one chosen file operation: for tests that kill a real
 * {@code backfill compact} between two of its steps, at a known point, without a hook in the code under test and
 * without sleeping. A child JVM gets it for {@code file:} paths through Spark's Hadoop settings (see {@link
 * #settings}); the lake code takes it for the raw local file system it is.
 *
 * <p>When the operation named by {@link #GATE} ({@code create}, {@code rename} — judged by the target's name —
 * or {@code delete}) meets a file whose name matches its pattern, the thread writes the file named by
 * {@link #REACHED} (holding the path) and then waits until the process is killed. A {@code create} stops after the
 * file is created, the others before they act.
 */
public final class GatedLocalFileSystem extends RawLocalFileSystem {
    /** {@code <operation>:<regular expression a file name must match>}, e.g. {@code rename:.*\.journal}. */
    public static final String GATE = "recount.test.gate";
    /** The file written when the gate is reached. */
    public static final String REACHED = "recount.test.gate-reached";

    /** One stop per process: the test kills it there. */
    private static final AtomicBoolean STOPPED = new AtomicBoolean();

    private String operation;
    private Pattern name;
    private java.nio.file.Path reached;

    /** The JVM options that give a child JVM's Spark this file system, stopping at {@code gate}. */
    public static List<String> settings(String gate, java.nio.file.Path reached) {
        return List.of(
                "-Dspark.hadoop.fs.file.impl=" + GatedLocalFileSystem.class.getName(),
                // Hadoop caches one file system per scheme: one made before these settings applied would be reused.
                "-Dspark.hadoop.fs.file.impl.disable.cache=true",
                "-Dspark.hadoop." + GATE + "=" + gate,
                "-Dspark.hadoop." + REACHED + "=" + reached);
    }

    @Override
    public void initialize(URI uri, Configuration conf) throws IOException {
        super.initialize(uri, conf);
        String gate = conf.get(GATE);
        if (gate == null) return;
        int colon = gate.indexOf(':');
        operation = gate.substring(0, colon);
        name = Pattern.compile(gate.substring(colon + 1));
        reached = java.nio.file.Path.of(conf.get(REACHED));
    }

    @Override
    public FSDataOutputStream create(
            Path f,
            FsPermission permission,
            boolean overwrite,
            int bufferSize,
            short replication,
            long blockSize,
            Progressable progress)
            throws IOException {
        FSDataOutputStream out = super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
        stopAt("create", f);
        return out;
    }

    /** The overload FileSystem.create(Path, boolean) ends in: the raw local file system implements it directly. */
    @Override
    public FSDataOutputStream create(
            Path f, boolean overwrite, int bufferSize, short replication, long blockSize, Progressable progress)
            throws IOException {
        FSDataOutputStream out = super.create(f, overwrite, bufferSize, replication, blockSize, progress);
        stopAt("create", f);
        return out;
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        stopAt("rename", dst);
        return super.rename(src, dst);
    }

    @Override
    public boolean delete(Path p, boolean recursive) throws IOException {
        stopAt("delete", p);
        return super.delete(p, recursive);
    }

    private void stopAt(String op, Path p) throws IOException {
        if (!op.equals(operation) || !name.matcher(p.getName()).matches() || !STOPPED.compareAndSet(false, true)) {
            return;
        }
        java.nio.file.Path tmp = reached.resolveSibling(reached.getFileName() + ".tmp");
        Files.writeString(tmp, p.toString(), StandardCharsets.UTF_8);
        Files.move(tmp, reached, StandardCopyOption.ATOMIC_MOVE);
        try {
            new CountDownLatch(1).await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted at the test's gate", e);
        }
    }
}
