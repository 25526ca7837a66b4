package dev.recount.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalEnvFileTest {
    @TempDir
    Path tmp;

    @Test
    void everyValueIsSingleQuotedForTheShell() {
        assertThat(LocalEnvFile.quote("127.0.0.1:9092")).isEqualTo("'127.0.0.1:9092'");
        assertThat(LocalEnvFile.quote("a b $HOME `x` \"y\"")).isEqualTo("'a b $HOME `x` \"y\"'");
        assertThat(LocalEnvFile.quote("it's")).isEqualTo("'it'\\''s'");
        assertThat(LocalEnvFile.quote("")).isEqualTo("''");
    }

    @Test
    void writesExportLinesInOrderOwnerOnlyAndReadsThemBack() throws Exception {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:40001");
        values.put("PGPASSWORD", "pw'with$odd chars");
        values.put("RECOUNT_JDBC_URL", "jdbc:postgresql://127.0.0.1:40002/recount");
        Path file = LocalEnvFile.in(tmp.resolve("home"));
        LocalEnvFile.write(file, values);

        String text = Files.readString(file);
        assertThat(text)
                .contains(
                        "export KAFKA_BOOTSTRAP_SERVERS='127.0.0.1:40001'\n",
                        "export PGPASSWORD='pw'\\''with$odd chars'\n",
                        "export RECOUNT_JDBC_URL='jdbc:postgresql://127.0.0.1:40002/recount'\n");
        assertThat(text.indexOf("KAFKA_BOOTSTRAP_SERVERS")).isLessThan(text.indexOf("RECOUNT_JDBC_URL"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
        assertThat(LocalEnvFile.read(file)).containsExactlyEntriesOf(values);
        try (var left = Files.list(tmp.resolve("home"))) {
            assertThat(left.map(f -> f.getFileName().toString())).containsExactly("local.env");
        }
    }

    @Test
    void readsPlainAndDoubleQuotedAssignmentsAndSkipsComments() throws Exception {
        Path file = tmp.resolve("local.env");
        Files.writeString(
                file, "# a comment\n\nA=plain\nexport B=\"double\"\n  export C='single'  \nnot an assignment\n");
        assertThat(LocalEnvFile.read(file))
                .containsExactly(Map.entry("A", "plain"), Map.entry("B", "double"), Map.entry("C", "single"));
    }

    @Test
    void amendSetsAndRemovesKeysAndKeepsTheRest() {
        Path file = tmp.resolve("local.env");
        Map<String, String> values = new LinkedHashMap<>();
        values.put("KEEP", "1");
        values.put("DROP", "2");
        LocalEnvFile.write(file, values);

        LocalEnvFile.amend(file, Map.of("ADD", "3"), List.of("DROP"));

        assertThat(LocalEnvFile.read(file)).containsExactly(Map.entry("KEEP", "1"), Map.entry("ADD", "3"));
    }

    @Test
    void amendingAMissingFileCreatesNothing() {
        LocalEnvFile.amend(tmp.resolve("absent.env"), Map.of("ADD", "3"), List.of());
        assertThat(tmp.resolve("absent.env")).doesNotExist();
    }

    @Test
    void rejectsNamesTheShellCannotAssign() {
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("not-a-name", "x");
        assertThatThrownBy(() -> LocalEnvFile.render(bad))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not-a-name");
    }

    @Test
    void missingFileReadsAsEmpty() {
        assertThat(LocalEnvFile.read(tmp.resolve("absent.env"))).isEmpty();
    }
}
