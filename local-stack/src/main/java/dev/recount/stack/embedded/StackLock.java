package dev.recount.stack.embedded;

import dev.recount.core.time.Wait;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Optional;

/** An OS file lock on {@code home/stack.lock} held by up and down: two of them never interleave on one home. */
final class StackLock implements AutoCloseable {
    private final FileChannel channel;
    private final FileLock lock;

    private StackLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    static StackLock acquire(StackLayout layout, Duration wait) {
        FileChannel channel = null;
        try {
            Files.createDirectories(layout.home());
            channel = FileChannel.open(layout.lockFile(), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileChannel locked = channel;
            Optional<FileLock> lock = Wait.upTo(wait)
                    .every(Duration.ofMillis(100))
                    .untilPresent(() -> {
                        try {
                            return Optional.ofNullable(locked.tryLock());
                        } catch (OverlappingFileLockException e) {
                            return Optional.empty(); // held by this JVM (tests run commands in-process)
                        }
                    });
            if (lock.isPresent()) return new StackLock(channel, lock.get());
            channel.close();
            throw new StackException("another `recount up` or `recount down` is running on " + layout.home()
                    + " (it holds " + layout.lockFile() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(channel);
            throw new StackException("interrupted while waiting for " + layout.lockFile(), e);
        } catch (IOException e) {
            closeQuietly(channel);
            throw new StackException("cannot lock " + layout.lockFile() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException e) {
            // closing the channel releases it anyway
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel == null) return;
        try {
            channel.close();
        } catch (IOException e) {
            // nothing left to do
        }
    }
}
