package dev.recount.stack.cluster;

import dev.recount.stack.embedded.StackException;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The runtime classpaths of the framework processes, as the build writes them: {@code local-clusters/flink} and
 * {@code local-clusters/spark} ({@code target/runtime.classpath}). Flink's and Spark's are separate files and
 * separate JVMs: they never share a classpath, nor with this JVM's Kafka broker classes.
 */
public record ClusterClasspaths(String flink, String spark) {

    /** Reads both files under the repository root ($RECOUNT_ROOT, set by ./recount; else where this jar was built). */
    public static ClusterClasspaths fromBuild() {
        Path root = repositoryRoot();
        return new ClusterClasspaths(read(root, "flink"), read(root, "spark"));
    }

    static Path repositoryRoot() {
        String fromEnv = System.getenv("RECOUNT_ROOT");
        if (fromEnv != null && !fromEnv.isBlank()) return Path.of(fromEnv);
        String fromProperty = System.getProperty("recount.root");
        if (fromProperty != null && !fromProperty.isBlank()) return Path.of(fromProperty);
        // deploy/target/deploy-<v>.jar (or deploy/target/classes) -> the repository root
        return codeLocation()
                .map(p -> p.getParent().getParent().getParent())
                .orElseThrow(() -> new StackException("cannot tell where the recount repository is; set RECOUNT_ROOT"));
    }

    private static Optional<Path> codeLocation() {
        try {
            return Optional.of(Path.of(ClusterClasspaths.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI()));
        } catch (URISyntaxException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static String read(Path root, String framework) {
        Path file = root.resolve("local-clusters")
                .resolve(framework)
                .resolve("target")
                .resolve("runtime.classpath");
        try {
            String classpath = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (classpath.isEmpty()) throw new StackException(file + " is empty; rebuild: mvn -DskipTests package");
            return classpath;
        } catch (IOException e) {
            throw new StackException(
                    "no " + framework + " cluster classpath at " + file
                            + "; build it first (./recount build, or mvn -DskipTests package)",
                    e);
        }
    }
}
