package dev.recount.stack.embedded;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Main of the Kafka broker process that {@code recount up} starts (see {@link KafkaBroker}): records its pid,
 * formats the KRaft storage on the first start, then runs Kafka's own server main, which handles SIGTERM with a
 * controlled shutdown. Not for direct use.
 *
 * <p>Arguments: {@code <server.properties> <cluster-id> <pid-file>}.
 */
public final class KafkaBrokerMain {
    private KafkaBrokerMain() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: KafkaBrokerMain <server.properties> <cluster-id> <pid-file>");
            System.exit(2);
        }
        Path properties = Path.of(args[0]);
        String clusterId = args[1];
        Path pidFile = Path.of(args[2]);
        // `up` wrote the pid it spawned; this is the authoritative one if a wrapper (setsid) had to fork.
        StackFiles.writeAtomically(pidFile, ProcessHandle.current().pid() + "\n", false);

        // --ignore-formatted: a restart finds the storage formatted and keeps it.
        int formatted = kafka.tools.StorageTool.execute(
                new String[] {"format", "-t", clusterId, "-c", properties.toString(), "--ignore-formatted"},
                System.out);
        if (formatted != 0) {
            System.err.println("formatting the Kafka storage failed with exit code " + formatted);
            System.exit(formatted);
        }
        kafka.Kafka.main(new String[] {properties.toString()});
    }
}
