package dev.recount.e2e.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./recount} itself: a mistyped command is a usage error before anything is built; {@code --version}. */
class LauncherTest {
    @TempDir
    Path cwd; // no .recount/local.env here

    record Run(int exit, String out, String err) {}

    private Run launch(String... args) throws IOException, InterruptedException {
        Path root = Path.of(System.getProperty("recount.root")).toAbsolutePath().normalize();
        List<String> command =
                new ArrayList<>(List.of("bash", root.resolve("recount").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toFile());
        pb.environment().put("RECOUNT_NO_BUILD", "1"); // use what the reactor built
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
}
