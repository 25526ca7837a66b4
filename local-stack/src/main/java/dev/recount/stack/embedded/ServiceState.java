package dev.recount.stack.embedded;

import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * One service of the local stack as {@code status} sees it.
 *
 * @param running   its process runs (pid file and command line agree)
 * @param answering it answered a request just now (a metadata request, a SELECT 1)
 * @param stalePid  the pid a previous run left behind when the process is gone (crash, kill -9, reboot)
 */
public record ServiceState(
        String name, boolean running, long pid, int port, boolean answering, Path data, OptionalLong stalePid) {
    public boolean up() {
        return running && answering;
    }
}
