package dev.recount.e2e.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./recount} itself: a mistyped command is a usage error before anything is built; {@code --version}; a local
 * cluster that is gone is one line at once.
 */
class LauncherTest {
    @TempDir
    Path cwd; // no .recount/local.env here

    record Run(int exit, String out, String err) {}

    private Run launch(String... args) throws IOException, InterruptedException {
        return launch(Map.of(), args);
    }

    private Run launch(Map<String, String> env, String... args) throws IOException, InterruptedException {
        Path root = root();
        List<String> command =
                new ArrayList<>(List.of("bash", root.resolve("recount").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toFile());
        pb.environment().put("RECOUNT_NO_BUILD", "1"); // use what the reactor built
        pb.environment().putAll(env);
        pb.redirectOutput(cwd.resolve("out.txt").toFile())
                .redirectError(cwd.resolve("err.txt").toFile());
        Process p = pb.start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("./recount " + String.join(" ", args) + " did not end within 60 s");
        }
        return new Run(
                p.exitValue(),
                java.nio.file.Files.readString(cwd.resolve("out.txt"), StandardCharsets.UTF_8),
                java.nio.file.Files.readString(cwd.resolve("err.txt"), StandardCharsets.UTF_8));
    }

    @Test
    void anUnknownCommandIsAUsageErrorOnOneLine() throws Exception {
        Run run = launch("strem", "--bounded");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("recount: unknown command 'strem' (see ./recount --help)\n");
    }

    @Test
    void versionIsTheBuilds() throws Exception {
        Run run = launch("--version");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out().strip()).matches("recount \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    }

    @Test
    void helpNamesTheContract() throws Exception {
        Run run = launch("--help");
        assertThat(run.exit()).isZero();
        assertThat(run.out()).contains("--version", "docs/contract.md");
    }

    /**
     * The reconciler's commands start their JVM with the root pom's {@code reconciler.jvm.flags} (what the reconcile
     * benchmark runs with too), before {@code JAVA_OPTS}, so that a user's flag wins; other commands do not get them.
     */
    @Test
    void theReconcilersJvmFlagsComeFromTheRootPomAndJavaOptsOverrideThem() throws Exception {
        Matcher m = Pattern.compile("<reconciler\\.jvm\\.flags>(.*)</reconciler\\.jvm\\.flags>")
                .matcher(java.nio.file.Files.readString(root().resolve("pom.xml"), StandardCharsets.UTF_8));
        assertThat(m.find())
                .as("<reconciler.jvm.flags> in the root pom, on one line")
                .isTrue();
        assertThat(m.group(1)).isEqualTo("-XX:TieredStopAtLevel=1");
        Map<String, String> printFlags = Map.of("JAVA_OPTS", "-XX:+PrintCommandLineFlags");

        for (String command : List.of("reconcile", "reports")) {
            Run run = launch(printFlags, command, "--help");
            assertThat(run.exit()).as(run.err()).isZero();
            assertThat(run.out()).as(command).contains("-XX:TieredStopAtLevel=1");
        }
        Run overridden = launch(
                Map.of("JAVA_OPTS", "-XX:+PrintCommandLineFlags -XX:TieredStopAtLevel=4"), "reconcile", "--help");
        assertThat(overridden.exit()).as(overridden.err()).isZero();
        assertThat(overridden.out()).contains("-XX:TieredStopAtLevel=4").doesNotContain("TieredStopAtLevel=1");
        Run version = launch(printFlags, "--version");
        assertThat(version.out()).doesNotContain("TieredStopAtLevel");
    }

    /**
     * {@code stream --cluster} with the local cluster's JobManager gone (killed, the machine restarted) says so at
     * once, on one line, instead of a minute of Flink's client retrying with a stack trace per attempt.
     */
    @Test
    void streamOnAClusterWhoseJobManagerIsGoneSaysSoAtOnce() throws Exception {
        int closedPort = closedPort();
        Path conf = java.nio.file.Files.createDirectories(cwd.resolve("flink-conf"));
        java.nio.file.Files.writeString(
                conf.resolve("config.yaml"), "rest.address: 127.0.0.1\nrest.port: " + closedPort + "\n");

        Run run = launch(
                Map.of("RECOUNT_NO_LOCAL_ENV", "1", "RECOUNT_FLINK_CONF_DIR", conf.toString()), "stream", "--cluster");

        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.err())
                .isEqualTo("recount: stream --cluster: the local Flink JobManager (127.0.0.1:" + closedPort
                        + ") does not answer; start it again with ./recount up --cluster (the job resumes from its"
                        + " last checkpoint)\n");
    }

    /** The same for {@code backfill --cluster} and the local cluster's Spark Master. */
    @Test
    void backfillOnAClusterWhoseMasterIsGoneSaysSoAtOnce() throws Exception {
        int closedPort = closedPort();
        Path properties = cwd.resolve("spark-defaults.conf");
        java.nio.file.Files.writeString(properties, "spark.app.name recount-backfill\n");

        Run run = launch(
                Map.of(
                        "RECOUNT_NO_LOCAL_ENV",
                        "1",
                        "RECOUNT_SPARK_MASTER",
                        "spark://127.0.0.1:" + closedPort,
                        "RECOUNT_SPARK_PROPERTIES",
                        properties.toString()),
                "backfill",
                "range",
                "--from",
                "2026-01-01T00:00:00Z",
                "--to",
                "2026-01-01T01:00:00Z",
                "--cluster");

        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.err())
                .isEqualTo("recount: backfill --cluster: the local Spark Master (spark://127.0.0.1:" + closedPort
                        + ") does not answer; start it again with ./recount up --cluster\n");
    }

    /** A loopback port nothing listens on (it was free a moment ago). */
    private static int closedPort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static Path root() {
        return Path.of(System.getProperty("recount.root")).toAbsolutePath().normalize();
    }
}
