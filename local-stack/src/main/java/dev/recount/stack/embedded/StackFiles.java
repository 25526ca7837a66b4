package dev.recount.stack.embedded;

import dev.recount.core.io.AtomicFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** Small file helpers: whole-file atomic writes (a crash never leaves half a file), owner-only secrets. */
public final class StackFiles {
    private StackFiles() {}

    /** Writes {@code text} to a sibling temp file and renames it over {@code file}. */
    public static void writeAtomically(Path file, String text, boolean ownerOnly) {
        try {
            AtomicFile.write(file, text, ownerOnly);
        } catch (IOException e) {
            throw new StackException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** Creates {@code dir} if needed and makes it owner-only (rwx------), whatever the umask made it. */
    public static void ownerOnlyDirectory(Path dir) {
        try {
            Files.createDirectories(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        } catch (IOException e) {
            throw new StackException("cannot make " + dir + " owner-only: " + e.getMessage(), e);
        }
    }

    /** The first line of {@code file}, trimmed, or empty when the file does not exist or is empty. */
    public static Optional<String> firstLine(Path file) {
        try {
            if (!Files.isRegularFile(file)) return Optional.empty();
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return lines.isEmpty() || lines.get(0).isBlank()
                    ? Optional.empty()
                    : Optional.of(lines.get(0).trim());
        } catch (IOException e) {
            throw new StackException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** A pid file's pid, or empty when there is none or it does not hold a number (a half-written file). */
    public static OptionalLong readPid(Path file) {
        try {
            return firstLine(file).map(s -> OptionalLong.of(Long.parseLong(s))).orElse(OptionalLong.empty());
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** Deletes a directory tree; used only for a half-initialised PostgreSQL directory that initdb must redo. */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) return;
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    if (exc != null) throw exc;
                    Files.delete(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new StackException("cannot delete " + dir + ": " + e.getMessage(), e);
        }
    }

    /** The last non-blank line of a log file that looks like an error, else its last non-blank line; for messages. */
    public static String lastErrorLine(Path log) {
        try {
            if (!Files.isRegularFile(log)) return "";
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            String last = "";
            for (int i = lines.size() - 1; i >= 0 && i >= lines.size() - 200; i--) {
                String l = lines.get(i).strip();
                if (l.isEmpty()) continue;
                if (last.isEmpty()) last = l;
                if (l.contains("FATAL") || l.contains("ERROR") || l.contains("Exception")) return l;
            }
            return last;
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
