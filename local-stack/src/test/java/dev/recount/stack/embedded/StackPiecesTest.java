package dev.recount.stack.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The parts of the stack that need no running service: ports, the broker's configuration, state, process probes. */
class StackPiecesTest {
    @TempDir
    Path tmp;

    @Test
    void anExplicitPortInUseIsAClearError() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, Ports.LOOPBACK)) {
            int port = taken.getLocalPort();
            assertThat(Ports.isFree(port)).isFalse();
            assertThat(Ports.isOpen(port)).isTrue();
            assertThatThrownBy(() -> Ports.choose(port, 0, "Kafka port (local.kafka-port)"))
                    .isInstanceOf(StackException.class)
                    .hasMessage("Kafka port (local.kafka-port) " + port
                            + " is in use on 127.0.0.1; choose another port, or 0 to pick a free one");
        }
    }

    @Test
    void oneExplicitPortForTwoServicesIsAClearError() {
        assertThatThrownBy(() -> Ports.choose(40001, 0, "PostgreSQL port (local.postgres-port)", 40001))
                .isInstanceOf(StackException.class)
                .hasMessageContaining("40001 is the port of another service of the stack");
    }

    @Test
    void portZeroReusesThePreviousPortWhenFreeElsePicksAnother() throws IOException {
        int previous;
        try (ServerSocket s = new ServerSocket(0, 1, Ports.LOOPBACK)) {
            previous = s.getLocalPort();
        }
        assertThat(Ports.choose(0, previous, "x")).isEqualTo(previous);
        try (ServerSocket busy = new ServerSocket(previous, 1, Ports.LOOPBACK)) {
            int chosen = Ports.choose(0, previous, "x");
            assertThat(chosen).isNotEqualTo(previous).isPositive();
        }
        assertThat(Ports.choose(0, previous, "x", previous)).isNotEqualTo(previous);
    }

    @Test
    void brokerListensOnLoopbackOnlyAsASingleKraftNode() throws IOException {
        StackLayout layout = new StackLayout(tmp);
        Properties p = new Properties();
        p.load(new java.io.StringReader(KafkaBroker.serverProperties(layout, 40001, 40002, 3)));
        assertThat(p.getProperty("process.roles")).isEqualTo("broker,controller");
        assertThat(p.getProperty("listeners")).isEqualTo("PLAINTEXT://127.0.0.1:40001,CONTROLLER://127.0.0.1:40002");
        assertThat(p.getProperty("advertised.listeners")).isEqualTo("PLAINTEXT://127.0.0.1:40001");
        assertThat(p.getProperty("controller.quorum.voters")).isEqualTo("1@127.0.0.1:40002");
        assertThat(p.getProperty("log.dirs")).isEqualTo(layout.kafkaData().toString());
        assertThat(p.getProperty("num.partitions")).isEqualTo("3");
        assertThat(p.getProperty("offsets.topic.replication.factor")).isEqualTo("1");
    }

    @Test
    void stateRoundTripsThroughItsFile() {
        StackLayout layout = new StackLayout(tmp);
        StackState state = StackState.load(layout);
        assertThat(state.kafkaPort()).isZero();
        state.set(StackState.KAFKA_PORT, 40001);
        state.set(StackState.POSTGRES_ADMIN_USER, "recount");
        state.save(layout);
        StackState again = StackState.load(layout);
        assertThat(again.kafkaPort()).isEqualTo(40001);
        assertThat(again.get(StackState.POSTGRES_ADMIN_USER)).isEqualTo("recount");
    }

    @Test
    void databaseNameComesFromTheJdbcUrl() {
        assertThat(UpSettings.databaseOf("jdbc:postgresql://localhost:5432/recount"))
                .isEqualTo("recount");
        assertThat(UpSettings.databaseOf("jdbc:postgresql://h:1/other?currentSchema=x"))
                .isEqualTo("other");
        assertThat(UpSettings.databaseOf("jdbc:postgresql://h:1/")).isEqualTo("recount");
    }

    @Test
    void processProbeSeesLiveProcessesAndNotExitedOnes() throws Exception {
        assertThat(ProcessProbe.isAlive(ProcessHandle.current().pid())).isTrue();
        assertThat(ProcessProbe.commandLine(ProcessHandle.current().pid()).orElseThrow())
                .isNotEmpty();
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        assertThat(ProcessProbe.isAlive(p.pid())).isFalse();
    }

    @Test
    void aPidFileOfAnotherProgramIsNotOurBroker() throws Exception {
        StackLayout layout = new StackLayout(tmp);
        // This JVM is alive but is not a broker of this home: a recycled pid must not count as running.
        StackFiles.writeAtomically(
                layout.kafkaPidFile(), ProcessHandle.current().pid() + "\n", false);
        KafkaBroker broker = new KafkaBroker(layout);
        assertThat(broker.runningPid()).isEmpty();
        assertThat(broker.stalePid()).hasValue(ProcessHandle.current().pid());
    }

    @Test
    void aPostmasterPidFileOfAnotherProgramIsNotARunningServer() throws Exception {
        StackLayout layout = new StackLayout(tmp);
        long self = ProcessHandle.current().pid();
        // postmaster.pid: pid, data directory, start time, port, ...
        StackFiles.writeAtomically(
                layout.postgresData().resolve("postmaster.pid"),
                self + "\n" + layout.postgresData() + "\n1795946400\n40002\n",
                false);
        PostgresServer server = new PostgresServer(layout);
        assertThat(server.running()).isEmpty();
        assertThat(server.stalePid()).hasValue(self);
    }
}
