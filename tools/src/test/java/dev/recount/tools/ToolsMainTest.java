package dev.recount.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tools' command line in-process: help, argument errors, and the failures that need no Kafka or database. */
class ToolsMainTest {
    @TempDir
    Path tmp;

    @Test
    void helpListsEveryCommand() {
        CommandRun run = CommandRun.of("--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("produce", "generate", "demo", "advise", "migrate");
    }

    @Test
    void everyCommandHasHelp() {
        assertThat(CommandRun.of("produce", "--help").out()).contains("--file", "--rate", "--topic");
        assertThat(CommandRun.of("generate", "--help").out()).contains("--events", "--seed");
        for (String command : new String[] {"produce", "generate", "demo", "advise", "migrate"}) {
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
        CommandRun run = CommandRun.of("generate", "--no-such-flag");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
        assertThat(run.err()).contains("--no-such-flag");
    }

    @Test
    void anUnknownCommandIsAUsageError() {
        CommandRun run = CommandRun.of("prodce");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
        assertThat(run.err()).startsWith("recount: ").contains("'prodce'");
    }

    @Test
    void aNegativeEventCountIsAUsageErrorBeforeKafkaIsAsked() {
        CommandRun run = CommandRun.of(
                "generate", "--events", "-5", "--file", tmp.resolve("g.jsonl").toString());
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err().strip())
                .isEqualTo("recount generate: --events must be >= 1, got -5 (see recount generate --help)");
        CommandRun viaKafka = CommandRun.of("generate", "--events", "-5");
        assertThat(viaKafka.exitCode()).isEqualTo(2);
        assertThat(tmp.resolve("g.jsonl")).doesNotExist();
    }

    @Test
    void aBadProfileValueIsAUsageError() {
        CommandRun run =
                CommandRun.of("generate", "--file", tmp.resolve("g.jsonl").toString(), "--too-late-share", "2");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).startsWith("recount generate: ").contains("tooLateShare");
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
    }

    @Test
    void everyCommandHasTheBuildsVersion() {
        for (String command : new String[] {"produce", "generate", "demo", "advise", "migrate"}) {
            CommandRun run = CommandRun.of(command, "--version");
            assertThat(run.exitCode()).as(command).isZero();
            assertThat(run.out().strip()).as(command).matches("recount \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
        }
    }

    @Test
    void migrateWithAnUnknownSettingIsAUsageErrorBeforeConnecting() throws IOException {
        Path config = tmp.resolve("typo.properties");
        Files.writeString(config, "postgres.jdbc-ur=jdbc:postgresql://127.0.0.1:1/none\n");
        CommandRun run = CommandRun.of("migrate", "--config", config.toString());
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).startsWith("recount migrate: ").contains("unknown setting 'postgres.jdbc-ur'");
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
    }

    @Test
    void migrateWithNoDatabaseFailsWithOneLine() throws IOException {
        Path config = tmp.resolve("nodb.properties");
        Files.writeString(
                config,
                "postgres.jdbc-url=jdbc:postgresql://127.0.0.1:1/none\npostgres.password-env=RECOUNT_UNSET_IN_TESTS\n");
        CommandRun run = CommandRun.of("migrate", "--config", config.toString());
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).startsWith("recount migrate: ");
        assertThat(run.errIsOneLine()).as(run.err()).isTrue();
    }

    @Test
    void produceArgumentsAndMissingFile() {
        CommandRun noFile = CommandRun.of("produce");
        assertThat(noFile.exitCode()).isEqualTo(2);
        assertThat(noFile.err()).contains("--file");
        assertThat(noFile.errIsOneLine()).isTrue();

        CommandRun badRate = CommandRun.of("produce", "--file", "x.jsonl", "--rate", "-1");
        assertThat(badRate.exitCode()).isEqualTo(2);
        assertThat(badRate.err()).contains("--rate");

        CommandRun missing = CommandRun.of(
                "produce", "--file", tmp.resolve("absent.jsonl").toString(), "--bootstrap-servers", "127.0.0.1:1");
        assertThat(missing.exitCode()).isEqualTo(1);
        assertThat(missing.errIsOneLine()).as(missing.err()).isTrue();
        assertThat(missing.err()).contains("no such file", "absent.jsonl");
    }
}
