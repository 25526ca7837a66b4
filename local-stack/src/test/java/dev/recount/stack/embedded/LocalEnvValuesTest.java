package dev.recount.stack.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.LocalEnvFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code up} puts in local.env: the variables the contract names, in a stable order, readable back. */
class LocalEnvValuesTest {
    @TempDir
    Path tmp;

    @Test
    void upWritesTheContractsVariablesInOrder() throws Exception {
        Map<String, String> values = EmbeddedStack.envValues(
                "127.0.0.1:40001",
                40002,
                "recount",
                "recount",
                "pw'with$odd chars",
                "jdbc:postgresql://127.0.0.1:40002/recount",
                Path.of("/home/me/.recount/secrets"));
        Path file = LocalEnvFile.in(tmp);
        LocalEnvFile.write(file, values);

        String text = Files.readString(file);
        assertThat(text)
                .contains(
                        "export KAFKA_BOOTSTRAP_SERVERS='127.0.0.1:40001'\n",
                        "export PGHOST='127.0.0.1'\n",
                        "export PGPORT='40002'\n",
                        "export PGDATABASE='recount'\n",
                        "export PGUSER='recount'\n",
                        "export PGPASSWORD='pw'\\''with$odd chars'\n",
                        "export RECOUNT_JDBC_URL='jdbc:postgresql://127.0.0.1:40002/recount'\n",
                        "export RECOUNT_PGPASSWORD_DIR='/home/me/.recount/secrets'\n");
        assertThat(text.indexOf("KAFKA_BOOTSTRAP_SERVERS")).isLessThan(text.indexOf("RECOUNT_JDBC_URL"));
        assertThat(LocalEnvFile.read(file)).isEqualTo(values);
    }
}
