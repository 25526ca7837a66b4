package dev.recount.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The oracle is worth something only while it shares no code with what it checks: no class of another recount module,
 * and no such module among its dependencies.
 */
class IndependenceTest {
    @Test
    void importsNothingOfRecountButItself() throws IOException {
        List<String> offending = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                for (String line : Files.readAllLines(f)) {
                    String l = line.strip();
                    if ((l.startsWith("import dev.recount.") || l.startsWith("import static dev.recount."))
                            && !l.contains("dev.recount.oracle.")) {
                        offending.add(f + ": " + l);
                    }
                }
            }
        }
        assertThat(offending).isEmpty();
    }

    @Test
    void dependsOnNoRecountModule() throws IOException {
        String pom = Files.readString(Path.of("pom.xml"));
        String dependencies = pom.substring(pom.indexOf("<dependencies>"));
        assertThat(dependencies).doesNotContain("dev.recount");
    }
}
