package dev.recount.core.io;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicLong;

/** Replaces a small text file so that a reader sees the old or the new content, never half of either. */
public final class AtomicFile {
    private static final AtomicLong WRITES = new AtomicLong();

    private AtomicFile() {}

    /**
     * Writes {@code text} to a sibling temporary file (owner-only from its creation when {@code ownerOnly}: it may
     * hold passwords) and renames it over {@code file}; an atomic rename where the file system has one.
     */
    public static void write(Path file, String text, boolean ownerOnly) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) Files.createDirectories(dir);
        // A temporary file of this write's own: two writers of one file (`recount up` and the broker it starts both
        // record the broker's pid) used to share one name, and one's rename then found the other's file gone.
        Path tmp = file.resolveSibling(
                file.getFileName() + "." + ProcessHandle.current().pid() + "-" + WRITES.incrementAndGet() + ".tmp");
        try {
            if (ownerOnly) {
                Files.createFile(
                        tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            }
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            try {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp); // gone after the rename; after a failure, not left behind
        }
    }
}
