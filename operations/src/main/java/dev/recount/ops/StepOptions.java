package dev.recount.ops;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options of every command that runs backfill and reconcile steps in this JVM ({@code nightly}, {@code correct}). */
public final class StepOptions {
    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file (default: $RECOUNT_CONFIG, else built-in defaults).")
    Path configFile;

    @Option(
            names = "--report-dir",
            paramLabel = "DIR",
            description = "Where the reconciliation reports go" + " (default: reconcile.report-dir).")
    Path reportDir;

    @Option(
            names = "--master",
            paramLabel = "URL",
            description = "Spark master, e.g. local[2] (default:" + " batch.spark-master).")
    String master;
}
