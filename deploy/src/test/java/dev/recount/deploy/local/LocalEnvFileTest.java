package dev.recount.deploy.local;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        Map<String, String> values = EmbeddedStack.envValues("127.0.0.1:40001", 40002, "recount", "recount",
                "pw'with$odd chars", "jdbc:postgresql://127.0.0.1:40002/recount", Path.of("/home/me/.recount/secrets"));
        Path file = tmp.resolve("local.env");
        LocalEnvFile.write(file, values);

        String text = Files.readString(file);
        assertThat(text).contains(
                "export KAFKA_BOOTSTRAP_SERVERS='127.0.0.1:40001'\n",
                "export PGHOST='127.0.0.1'\n",
                "export PGPORT='40002'\n",
                "export PGDATABASE='recount'\n",
                "export PGUSER='recount'\n",
                "export PGPASSWORD='pw'\\''with$odd chars'\n",
                "export RECOUNT_JDBC_URL='jdbc:postgresql://127.0.0.1:40002/recount'\n",
                "export RECOUNT_PGPASSWORD_DIR='/home/me/.recount/secrets'\n");
        assertThat(text.indexOf("KAFKA_BOOTSTRAP_SERVERS")).isLessThan(text.indexOf("RECOUNT_JDBC_URL"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(LocalEnvFile.read(file)).isEqualTo(values);
    }

    @Test
    void rejectsNamesTheShellCannotAssign() {
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("not-a-name", "x");
        assertThatThrownBy(() -> LocalEnvFile.render(bad)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void missingFileReadsAsEmpty() {
        assertThat(LocalEnvFile.read(tmp.resolve("absent.env"))).isEmpty();
    }
}
