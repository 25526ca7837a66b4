package dev.recount.stack.embedded;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Whether we run as root, and whether {@code unshare -U} works here (PostgreSQL's way around root, see PostgresServer). */
final class RootCheck {
    private static volatile Boolean unshareWorks;

    private RootCheck() {}

    static boolean isRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.UTF_8)) {
                if (line.startsWith("Uid:")) {
                    String[] f = line.substring(4).trim().split("\\s+");
                    return f.length > 1 && f[1].equals("0"); // effective uid
                }
            }
        } catch (IOException e) {
            // not Linux /proc: fall through to the user name
        }
        return "root".equals(System.getProperty("user.name"));
    }

    static void requireUnshare() {
        if (unshareWorks == null) unshareWorks = probe();
        if (!unshareWorks) {
            throw new StackException("PostgreSQL refuses to run as root, and `unshare -U` (util-linux, with user "
                    + "namespaces enabled) does not work here; install util-linux, enable user namespaces "
                    + "(sysctl user.max_user_namespaces > 0), or run as a non-root user");
        }
    }

    private static boolean probe() {
        try {
            Process p = new ProcessBuilder("unshare", "-U", "true")
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
