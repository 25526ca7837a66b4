package dev.recount.stack.embedded;

import dev.recount.core.config.LocalEnvFile;
import java.nio.file.Path;

/**
 * Where the local stack keeps everything, all under one home directory (default {@code .recount}):
 *
 * <pre>
 * home/local.env            connection settings as shell assignments (written by up)
 * home/stack.properties     ports, cluster id and admin user chosen at the first up, reused later
 * home/stack.lock           held while up or down runs, so two of them never interleave
 * home/logs/                kafka.log, kafka.out, postgres.log, initdb.log, pg_ctl.log
 * home/kafka/               server.properties, broker.pid, data/ (log.dirs and KRaft metadata)
 * home/postgres/            admin-password, data/ (the cluster); pgsql/ only when ~/.cache is not writable
 * home/secrets/             one owner-only password file per component login, &lt;login&gt;.password (written by up)
 * </pre>
 */
public record StackLayout(Path home) {
    public StackLayout {
        home = home.toAbsolutePath().normalize();
    }

    public Path envFile() {
        return LocalEnvFile.in(home);
    }

    public Path stateFile() {
        return home.resolve("stack.properties");
    }

    public Path lockFile() {
        return home.resolve("stack.lock");
    }

    public Path logs() {
        return home.resolve("logs");
    }

    public Path kafkaDir() {
        return home.resolve("kafka");
    }

    public Path kafkaProperties() {
        return kafkaDir().resolve("server.properties");
    }

    public Path kafkaData() {
        return kafkaDir().resolve("data");
    }

    public Path kafkaPidFile() {
        return kafkaDir().resolve("broker.pid");
    }

    public Path postgresDir() {
        return home.resolve("postgres");
    }

    public Path postgresData() {
        return postgresDir().resolve("data");
    }

    /** Where the PostgreSQL binaries go when the shared cache (~/.cache/recount) cannot be used. */
    public Path postgresBinaries() {
        return postgresDir().resolve("pgsql");
    }

    public Path postgresPasswordFile() {
        return postgresDir().resolve("admin-password");
    }

    /** The components' login passwords ({@code postgres.password-dir}), owner-only like the admin's. */
    public Path passwordDir() {
        return home.resolve("secrets");
    }
}
