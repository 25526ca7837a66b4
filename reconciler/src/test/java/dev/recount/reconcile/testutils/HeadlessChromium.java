package dev.recount.reconcile.testutils;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's {@code chromium}, headless, as a finance analyst's browser stand-in: renders a page to a PNG or
 * dumps the DOM after scripts would have run. Each call gets a fresh profile directory and no network
 * features, so nothing leaks between runs. Missing browser: the test fails under CI (CI=true), where the
 * project's scripts install it, and is skipped on a developer machine without it.
 */
public final class HeadlessChromium {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private final String binary;

    private HeadlessChromium(String binary) {
        this.binary = binary;
    }

    public static HeadlessChromium require() {
        String explicit = System.getenv("CHROMIUM");
        String found;
        if (explicit != null && !explicit.isBlank()) {
            found = Files.isExecutable(Path.of(explicit)) ? explicit : null;
        } else {
            found = onPath("chromium");
            if (found == null) found = onPath("chromium-browser");
        }
        if (found == null) {
            String message = (explicit != null && !explicit.isBlank()
                            ? "$CHROMIUM (" + explicit + ") is not executable"
                            : "chromium not found on PATH")
                    + ": install Debian's package `chromium`"
                    + " (apt-get install -y chromium, or deploy/bin/install-test-deps) to check the HTML report";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) fail(message);
            Assumptions.abort(message);
        }
        return new HeadlessChromium(found);
    }

    /** Renders {@code page} at {@code width}×{@code height} CSS pixels into {@code png}. */
    public void screenshot(Path page, Path png, int width, int height) throws IOException, InterruptedException {
        run(page, "--screenshot=" + png.toAbsolutePath(), "--window-size=" + width + "," + height, "--hide-scrollbars");
        if (!Files.isRegularFile(png)) throw new AssertionError("chromium wrote no screenshot to " + png);
    }

    /** The DOM of {@code page} after loading (and after any script on it would have run), serialized. */
    public String dumpDom(Path page) throws IOException, InterruptedException {
        return run(page, "--dump-dom");
    }

    private String run(Path page, String... extra) throws IOException, InterruptedException {
        Path profile = Files.createTempDirectory("recount-chromium-");
        Path stdout = Files.createTempFile("recount-chromium-", ".out");
        Path stderr = Files.createTempFile("recount-chromium-", ".err");
        try {
            List<String> cmd = new ArrayList<>(List.of(
                    binary,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-extensions",
                    "--user-data-dir=" + profile));
            cmd.addAll(List.of(extra));
            cmd.add(page.toAbsolutePath().toUri().toString());
            Process p = new ProcessBuilder(cmd)
                    .redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile())
                    .start();
            if (!p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("chromium did not finish within " + TIMEOUT + ": " + cmd);
            }
            if (p.exitValue() != 0) {
                throw new AssertionError("chromium exited " + p.exitValue() + ": " + tail(stderr));
            }
            return Files.readString(stdout, StandardCharsets.UTF_8);
        } finally {
            deleteTree(profile);
            Files.deleteIfExists(stdout);
            Files.deleteIfExists(stderr);
        }
    }

    private static String onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) return null;
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) return candidate.toString();
        }
        return null;
    }

    private static String tail(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }
}
