package dev.recount.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local stack's command line in-process: help, argument errors, and the failures that need no running stack. */
class LocalStackMainTest {
    @TempDir
    Path tmp;

    @Test
    void helpListsEveryCommand() {
        CommandRun run = CommandRun.of("--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("up", "down", "status").doesNotContain("produce");
    }

    @Test
    void everyCommandHasHelp() {
        assertThat(CommandRun.of("up", "--help").out())
                .contains("--home", "--config", "--partitions", "--kafka-port", "--postgres-port");
        assertThat(CommandRun.of("down", "--help").out())
                .contains("--home", "--clusters-only")
                .doesNotContain("--cluster ");
        assertThat(CommandRun.of("status", "--help").out())
                .contains("--home", "Exit codes", "6   partly: one service", "7   not running: nothing runs");
        for (String command : new String[] {"up", "down", "status"}) {
            assertThat(CommandRun.of(command, "--help").exitCode()).as(command).isZero();
        }
    }

    @Test
    void noCommandIsAUsageError() {
        CommandRun run = CommandRun.of();
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
        assertThat(run.err()).contains("missing command");
    }

    @Test
    void unknownOptionIsAOneLineUsageError() {
        CommandRun run = CommandRun.of("up", "--no-such-flag");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
        assertThat(run.err()).contains("--no-such-flag");
    }

    @Test
    void anUnknownCommandIsAUsageError() {
        CommandRun run = CommandRun.of("upp");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
        assertThat(run.err()).startsWith("recount: ").contains("'upp'");
    }

    @Test
    void everyCommandHasTheBuildsVersion() {
        for (String command : new String[] {"up", "down", "status"}) {
            CommandRun run = CommandRun.of(command, "--version");
            assertThat(run.exitCode()).as(command).isZero();
            assertThat(run.out().strip()).as(command).matches("recount \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
        }
    }

    @Test
    void badUpArgumentsAreRejectedBeforeAnythingStarts() {
        CommandRun partitions = CommandRun.of("up", "--home", tmp.toString(), "--partitions", "0");
        assertThat(partitions.exitCode()).isEqualTo(2);
        assertThat(partitions.err()).contains("--partitions must be at least 1");
        assertThat(partitions.errIsOneLine()).isTrue();

        CommandRun port = CommandRun.of("up", "--home", tmp.toString(), "--kafka-port", "70000");
        assertThat(port.exitCode()).isEqualTo(2);
        assertThat(port.err()).contains("--kafka-port must be between 0 and 65535");

        CommandRun wait = CommandRun.of("up", "--home", tmp.toString(), "--wait", "soon");
        assertThat(wait.exitCode()).isEqualTo(2);
        assertThat(wait.err()).contains("--wait", "soon");

        // --timeout, its old spelling, is read (and checked) as --wait.
        CommandRun timeout = CommandRun.of("up", "--home", tmp.toString(), "--timeout", "soon");
        assertThat(timeout.exitCode()).isEqualTo(2);
        assertThat(timeout.err()).contains("--timeout");
        assertThat(tmp.resolve("kafka")).doesNotExist();
    }

    @Test
    void kafkaPortInUseFailsWithOneLineAndStartsNothing() throws IOException {
        Path home = tmp.resolve("home");
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            CommandRun run = CommandRun.of(
                    "up", "--home", home.toString(), "--kafka-port", Integer.toString(taken.getLocalPort()));
            assertThat(run.exitCode()).isEqualTo(1);
            assertThat(run.errIsOneLine()).as(run.err()).isTrue();
            assertThat(run.err()).contains("Kafka port (local.kafka-port) " + taken.getLocalPort() + " is in use");
        }
        assertThat(home.resolve("kafka").resolve("broker.pid")).doesNotExist();
        assertThat(home.resolve("postgres").resolve("data")).doesNotExist();
    }

    @Test
    void postgresPortInUseFailsWithOneLine() throws IOException {
        Path home = tmp.resolve("home");
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            CommandRun run = CommandRun.of(
                    "up", "--home", home.toString(), "--postgres-port", Integer.toString(taken.getLocalPort()));
            assertThat(run.exitCode()).isEqualTo(1);
            assertThat(run.errIsOneLine()).as(run.err()).isTrue();
            assertThat(run.err())
                    .contains("PostgreSQL port (local.postgres-port) " + taken.getLocalPort() + " is in use");
        }
        assertThat(home.resolve("kafka").resolve("broker.pid")).doesNotExist();
    }

    @Test
    void statusAndDownOnAnEmptyHome() {
        Path home = tmp.resolve("never-up");
        CommandRun status = CommandRun.of("status", "--home", home.toString());
        assertThat(status.exitCode()).isEqualTo(StatusCommand.NOTHING_RUNS);
        assertThat(status.out()).contains("no local stack in " + home);

        CommandRun down = CommandRun.of("down", "--home", home.toString());
        assertThat(down.exitCode()).isZero();
        assertThat(down.out()).contains("nothing was running");
        assertThat(home).doesNotExist();

        CommandRun clustersOnly = CommandRun.of("down", "--home", home.toString(), "--clusters-only");
        assertThat(clustersOnly.exitCode()).isZero();
        assertThat(clustersOnly.out()).contains("no local clusters in " + home);
        assertThat(clustersOnly.err()).isEmpty();

        // down --cluster, the old spelling, still means "only the clusters", and says what it is now.
        CommandRun cluster = CommandRun.of("down", "--home", home.toString(), "--cluster");
        assertThat(cluster.exitCode()).isZero();
        assertThat(cluster.out()).contains("no local clusters in " + home);
        assertThat(cluster.err().strip()).isEqualTo("recount down: --cluster is deprecated, use --clusters-only");
    }

    @Test
    void statusNamesWhatAPreviousRunLeftBehind() throws Exception {
        Path home = tmp.resolve("crashed");
        Files.createDirectories(home.resolve("kafka"));
        long gone = deadPid();
        Files.writeString(home.resolve("kafka").resolve("broker.pid"), gone + "\n");
        Files.writeString(home.resolve("stack.properties"), "kafka.port=39999\npostgres.port=39998\n");

        CommandRun run = CommandRun.of("status", "--home", home.toString());
        assertThat(run.exitCode()).isEqualTo(StatusCommand.NOTHING_RUNS);
        assertThat(run.out()).contains("stopped", "pid " + gone + " of a previous run is gone", "127.0.0.1:39999");
    }

    /** The pid of a process that has exited (and been reaped by us, its parent). */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        return p.pid();
    }
}
