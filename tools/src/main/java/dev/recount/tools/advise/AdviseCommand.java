package dev.recount.tools.advise;

import dev.recount.core.cli.JsonOutput;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.Instants;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.event.EventValidator;
import dev.recount.tools.LocalConnection;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code advise}: recommends the watermark settings from observed arrival delays. Reads the input topic's
 * records with Kafka timestamps in {@code [from, to)}, measures arrival delay (record timestamp − event_ts) per
 * partition, and prints percentiles, a recommendation and what each candidate setting would do to these events.
 * The maths lives in {@link WatermarkAdvisor}; this class only reads and wires.
 */
@Command(
        name = "advise",
        mixinStandardHelpOptions = true,
        description = {
            "Recommend watermark.out-of-orderness, window.allowed-lateness and watermark.idleness from the arrival delays"
                    + " (Kafka record timestamp - event_ts) of the input topic's records in [from, to).",
            "Prints p50/p90/p99/p99.9 per partition and, for each candidate setting, the share of events it would make"
                    + " late (window fires again) and too late (backfill topic), replayed through per-partition watermarks.",
            "Invalid records and repeated event_ids are skipped, as the streaming job skips them."
        })
public final class AdviseCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--from",
            required = true,
            paramLabel = "T",
            description = "Start (inclusive) of the Kafka record timestamps to read, e.g. 2026-11-28T00:00:00Z.")
    String from;

    @Option(
            names = "--to",
            required = true,
            paramLabel = "T",
            description = "End (exclusive), e.g. 2026-11-29T00:00:00Z.")
    String to;

    @Option(names = "--topic", paramLabel = "T", description = "Topic (default: topics.input from the config).")
    String topic;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file over the built-in defaults (default: $RECOUNT_CONFIG if set). Its window.size"
                    + " is used, and its current settings are one of the candidates.")
    Path configFile;

    @Option(
            names = "--bootstrap-servers",
            paramLabel = "HOST:PORT",
            description = "Kafka (default: $KAFKA_BOOTSTRAP_SERVERS or the config's kafka.bootstrap-servers; "
                    + "else the local stack's local.env).")
    String bootstrapServers;

    @Option(
            names = "--max-records",
            paramLabel = "N",
            description = "Stop after N records in the range (default: as many as the JVM's heap holds, its maximum"
                    + " heap / " + ArrivalSample.PEAK_BYTES_PER_EVENT + " bytes; raise it with JAVA_OPTS=-Xmx...)."
                    + " Percentiles take fixed memory; the replay keeps each valid event's two timestamps.")
    Long maxRecords;

    @Mixin
    JsonOutput json;

    @Override
    public Integer call() {
        Instant start = instant(from, "--from");
        Instant end = instant(to, "--to");
        if (!start.isBefore(end)) {
            throw new ParameterException(spec.commandLine(), "--from " + from + " must be before --to " + to);
        }
        if (maxRecords != null && maxRecords < 1) {
            throw new ParameterException(spec.commandLine(), "--max-records must be >= 1, got " + maxRecords);
        }
        long limit = maxRecords != null
                ? maxRecords
                : defaultMaxRecords(Runtime.getRuntime().maxMemory());

        RecountConfig config = RecountConfig.fromEnvironment(configFile);
        EventTimeSettings current = config.eventTime();
        String target = topic != null ? topic : config.topics().input();
        String bootstrap = LocalConnection.kafkaBootstrapServers(config, bootstrapServers);
        PrintWriter out = spec.commandLine().getOut();

        ArrivalSample.Builder builder = new ArrivalSample.Builder(new EventValidator(current.validation()));
        KafkaArrivalReader.Read read =
                new KafkaArrivalReader(bootstrap, Duration.ofSeconds(30)).read(target, start, end, limit, builder);
        ArrivalSample sample = builder.build();
        if (!json.enabled()) {
            out.printf(
                    Locale.ROOT,
                    "topic %s at %s, record timestamps in [%s, %s): %d records, %d valid events,"
                            + " %d invalid and %d repeated event_ids skipped%s%n",
                    target,
                    bootstrap,
                    start,
                    end,
                    read.records(),
                    sample.events(),
                    sample.invalid(),
                    sample.duplicates(),
                    read.outsideRange() == 0
                            ? ""
                            : ", " + read.outsideRange() + " records in the offset range but outside the time range");
            if (read.truncated()) {
                out.printf(
                        Locale.ROOT,
                        "stopped after --max-records %d: partitions may be covered unevenly; narrow the range"
                                + " for a faithful replay%n",
                        limit);
            }
        }
        if (sample.events() == 0) {
            throw new IllegalStateException("no valid events with record timestamps in [" + start + ", " + end + ") on "
                    + target + ": nothing to learn from (check --from/--to and --topic)");
        }
        WatermarkAdvisor.Advice advice = WatermarkAdvisor.advise(sample, current);
        if (json.enabled()) {
            JsonOutput.print(
                    out,
                    AdviceJson.of(
                            new AdviceJson.ReadFacts(target, bootstrap, start, end, read, limit, sample), advice));
            return 0;
        }
        AdviceReport.print(advice, out);
        return 0;
    }

    /**
     * The default record limit: what a heap of {@code maxHeapBytes} holds at the sample's peak cost per event, so a
     * large range stops with "stopped after --max-records" rather than running out of memory (at least a million).
     */
    static long defaultMaxRecords(long maxHeapBytes) {
        return Math.max(1_000_000L, maxHeapBytes / ArrivalSample.PEAK_BYTES_PER_EVENT);
    }

    private Instant instant(String text, String option) {
        try {
            return Instants.parseInstant(text);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), option + ": " + e.getMessage());
        }
    }
}
