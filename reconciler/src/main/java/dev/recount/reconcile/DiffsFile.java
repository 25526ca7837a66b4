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

    private final long rows;

    private DiffsFile(FileChannel channel, Path named, long rows) {
        this.channel = channel;
        this.named = named;
        this.rows = rows;
    }

    /** Runs {@code query} (its columns those of {@link ReconciliationDiffsTable#INSERT_COLUMNS}) into a new file. */
    static DiffsFile read(Connection conn, Sql query) throws SQLException {
        FileChannel channel;
        Path named;
        try {
            // Created owner-only (rw-------) on POSIX file systems.
            Path file = Files.createTempFile("recount-reconcile-diffs-", ".copy");
            channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
            named = unlink(file) ? null : file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary file for the run's diffs", e);
        }
        try {
            // Flushed, not closed: closing the stream would close the channel.
            OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16);
            long rows = conn.unwrap(PGConnection.class)
                    .getCopyAPI()
                    .copyOut("COPY (" + query.inlined() + ") TO STDOUT", out);
            out.flush();
            return new DiffsFile(channel, named, rows);
        } catch (IOException e) {
            close(channel, named);
            throw new UncheckedIOException("cannot write the run's diffs to a temporary file", e);
        } catch (SQLException | RuntimeException e) {
            close(channel, named);
            throw e;
        }
    }

    /** Loads the rows into {@code reconciliation_diffs} on {@code conn}; returns how many. Once. */
    long load(Connection conn) throws SQLException {
        try {
            channel.position(0);
            InputStream in = new BufferedInputStream(Channels.newInputStream(channel), 1 << 16);
            long loaded = conn.unwrap(PGConnection.class)
                    .getCopyAPI()
                    .copyIn(
                            "COPY " + ReconciliationDiffsTable.TABLE + " (" + ReconciliationDiffsTable.INSERT_COLUMNS
                                    + ") FROM STDIN",
                            in);
            if (loaded != rows) {
                throw new IllegalStateException("loaded " + loaded + " diff rows, but " + rows + " were written");
            }
            return loaded;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the run's diffs back from their temporary file", e);
        }
    }

    /** How many rows the query gave. */
    long rows() {
        return rows;
    }

    /** Whether the file still has a name (only where an open file's name cannot be removed). */
    boolean named() {
        return named != null;
    }

    @Override
    public void close() {
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
