package dev.recount.ops;

import dev.recount.core.cli.JsonOutput;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Path;
import picocli.CommandLine.Mixin;
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

    @Option(
            names = "--lake",
            paramLabel = "PATH",
            description = "Raw event lake of the backfill: directory or URI (default: lake.path).")
    String lake;

    @Option(
            names = "--force",
            description = "Let the backfill recompute even beyond the lake's completeness boundary, or from lake hours"
                    + " holding fewer rows than the stream archived into them (as backfill's --force).")
    boolean force;

    @Mixin
    JsonOutput json;

    /** Where the steps' own text goes: stdout, or nowhere with --json (stdout is then the command's one object). */
    PrintWriter out(PrintWriter stdout) {
        return json.enabled() ? new PrintWriter(Writer.nullWriter()) : stdout;
    }
}
