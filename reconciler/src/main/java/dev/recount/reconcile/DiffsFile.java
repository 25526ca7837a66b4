package dev.recount.reconcile;

import dev.recount.db.tables.ReconciliationDiffsTable;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A first run's diffs on their way from the connection that computes them to the run's own (see {@link
 * SnapshotSurvey}): the second connection writes the rows of {@link ReconcileStatements#differingKeys} with {@code COPY
 * (query) TO STDOUT}, in the run's snapshot and writing nothing, into a temporary file; the run's connection loads
 * them into {@code reconciliation_diffs} with {@code COPY FROM STDIN}, in the run's transaction, once it is free. A
 * file, not memory: a day the stream missed entirely has as many diffs as keys. Text format: each value goes through
 * its type's output and input functions, which give back the same value for every type of the table.
 *
 * <p>The diffs are finance's numbers, so the file is created readable by this user only and its name is removed as
 * soon as it is open (where the file system allows that, as POSIX ones do): the open file is all there is, and it goes
 * with the process however the process ends, {@code kill -9} included.
 */
final class DiffsFile implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DiffsFile.class);

    private final FileChannel channel;
    /** The file's name while it still has one (a file system that cannot remove an open file's name), else null. */
    private final Path named;

    private long rows = -1;
    private boolean closed;

    private DiffsFile(FileChannel channel, Path named) {
        this.channel = channel;
        this.named = named;
    }

    /**
     * An empty file in the JVM's temporary directory ({@code java.io.tmpdir}, read now), owner-only and, where the file
     * system allows, already without a name. Created before the run starts its two connections, so that a directory
     * that cannot hold it (missing, full, read-only) costs the run only the join beside, not the run.
     *
     * @throws IOException whose message names the directory
     */
    static DiffsFile create() throws IOException {
        Path dir = Path.of(System.getProperty("java.io.tmpdir"));
        Path file;
        try {
            // Created owner-only (rw-------) on POSIX file systems.
            file = Files.createTempFile(dir, "recount-reconcile-diffs-", ".copy");
        } catch (IOException e) {
            throw new IOException("cannot create a file in " + dir + " (java.io.tmpdir): " + e, e);
        }
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException e) {
            unlink(file);
            throw new IOException("cannot open " + file + ": " + e, e);
        }
        return new DiffsFile(channel, unlink(file) ? null : file);
    }

    /**
     * Runs {@code query} (its columns those of {@link ReconciliationDiffsTable#insertColumns}) into this file, once.
     */
    DiffsFile write(Connection conn, Sql query) throws SQLException {
        if (rows >= 0) throw new IllegalStateException("the run's diffs were written already");
        try {
            // Flushed, not closed: closing the stream would close the channel.
            OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16);
            rows = conn.unwrap(PGConnection.class)
                    .getCopyAPI()
                    .copyOut("COPY (" + query.inlined() + ") TO STDOUT", out);
            out.flush();
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the run's diffs to a temporary file", e);
        }
    }

    /** Loads the rows into {@code diffs} (a metric set's {@code reconciliation_diffs}) on {@code conn}; returns how many. Once. */
    long load(Connection conn, ReconciliationDiffsTable diffs) throws SQLException {
        try {
            channel.position(0);
            InputStream in = new BufferedInputStream(Channels.newInputStream(channel), 1 << 16);
            long loaded = conn.unwrap(PGConnection.class)
                    .getCopyAPI()
                    .copyIn("COPY " + diffs.table() + " (" + diffs.insertColumns() + ") FROM STDIN", in);
            if (loaded != rows) {
                throw new IllegalStateException("loaded " + loaded + " diff rows, but " + rows + " were written");
            }
            return loaded;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the run's diffs back from their temporary file", e);
        }
    }

    /** How many rows the query gave (-1 before it ran). */
    long rows() {
        return rows;
    }

    /** Whether the file still has a name (only where an open file's name cannot be removed). */
    boolean named() {
        return named != null;
    }

    /** Closes the file (and removes its name if it still has one). Harmless twice. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        close(channel, named);
    }

    private static boolean unlink(Path file) {
        try {
            Files.delete(file);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void close(FileChannel channel, Path named) {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.warn("could not close the run's diffs file: {}", e.getMessage());
        }
        if (named != null && !unlink(named)) {
            // The run's outcome does not depend on it, but the file holds its diffs: say where it is.
            LOG.warn("could not delete the run's diffs file {}", named);
        }
    }
}
