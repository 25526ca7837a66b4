package dev.recount.tools.generate;

import dev.recount.core.cli.UsageException;
import dev.recount.core.config.Durations;
import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.Instants;
import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSets;
import dev.recount.oracle.Oracle;
import dev.recount.oracle.SetTruth;
import dev.recount.oracle.Truth;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./recount generate}: synthetic ad traffic to Kafka or a JSON-lines file, plus its ground truth per metric set
 * (the oracle's).
 */
@Command(
        name = "generate",
        mixinStandardHelpOptions = true,
        description = {
            "Synthetic ad traffic: skewed campaigns and channels, impressions/clicks/conversions with realistic costs,",
            "heavy-tailed arrival delays, too-late events, duplicate sends, every class of invalid record, and a phase",
            "in which one input partition goes quiet. Every event carries slot_id, country and device (values from the",
            "metric-sets file where it lists them). Writes the exact expected rows of every metric set (<set>.csv, and",
            "<set>.attribution.csv where it has attribution), computed by the independent oracle from the records sent,",
            "and a summary.json. Records carry their simulated arrival time as Kafka timestamp. Every event has a",
            "request_id: an impression its own id, a click or conversion that of an earlier impression of its",
            "campaign and channel."
        })
public final class GenerateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--events",
            defaultValue = "50000",
            description = "Valid unique events in the main range (default: ${DEFAULT-VALUE}).")
    long events;

    @Option(
            names = "--span",
            defaultValue = "5m",
            description = "Event-time length of the main range (default: ${DEFAULT-VALUE}).")
    String span;

    @Option(
            names = "--tail",
            description =
                    "Thin traffic after the main range so its windows close (default: window + out-of-orderness + allowed lateness + 30s).")
    String tail;

    @Option(
            names = "--start",
            description =
                    "Event time of the main range's start, ISO-8601 (default: now, floored to the minute, minus span).")
    String start;

    @Option(
            names = "--campaigns",
            defaultValue = TrafficShape.DEFAULT_CAMPAIGNS,
            description = "Number of campaigns, Zipf-skewed (default: ${DEFAULT-VALUE}).")
    int campaigns;

    @Option(
            names = "--seed",
            defaultValue = "1",
            description = "Random seed; the same seed and options give the same records (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--delay-median",
            defaultValue = TrafficShape.DEFAULT_DELAY_MEDIAN,
            description = "Median arrival delay (default: ${DEFAULT-VALUE}).")
    String delayMedian;

    @Option(
            names = "--delay-p99",
            defaultValue = TrafficShape.DEFAULT_DELAY_P99,
            description = "99th percentile arrival delay (default: ${DEFAULT-VALUE}).")
    String delayP99;

    @Option(
            names = "--too-late-share",
            defaultValue = TrafficShape.DEFAULT_TOO_LATE_SHARE,
            description = "Share of events delayed beyond the allowed lateness (default: ${DEFAULT-VALUE}).")
    double tooLateShare;

    @Option(
            names = "--duplicate-share",
            defaultValue = TrafficShape.DEFAULT_DUPLICATE_SHARE,
            description = "Share of events sent twice (default: ${DEFAULT-VALUE}).")
    double duplicateShare;

    @Option(
            names = "--invalid-share",
            defaultValue = TrafficShape.DEFAULT_INVALID_SHARE,
            description = "Invalid records per valid event (default: ${DEFAULT-VALUE}).")
    double invalidShare;

    @Option(
            names = "--quiet",
            defaultValue = TrafficShape.DEFAULT_QUIET,
            description =
                    "Fractions of the main range during which one partition is quiet, or 'none' (default: ${DEFAULT-VALUE}).")
    String quiet;

    @Option(
            names = "--rate",
            defaultValue = "0",
            description = "Records per second to Kafka; 0 = as fast as possible (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(
            names = "--file",
            description = "Write JSON lines to this file instead of Kafka (null values are skipped there).")
    Path file;

    @Option(
            names = "--partitions",
            description = "Partitions to plan for in --file mode (default: topics.input-partitions).")
    Integer partitions;

    @Option(names = "--topic", description = "Topic (default: topics.input).")
    String topic;

    @Option(
            names = "--truth-dir",
            description =
                    "Where <set>.csv and summary.json go (default: <file>.truth/, or .recount/generated/seed-<seed>/).")
    Path truthDir;

    @Option(names = "--config", description = "Config file (default: $RECOUNT_CONFIG or the built-in defaults).")
    Path config;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        // Checked before Kafka is asked for the topic's partitions: a bad count is a usage error, whatever runs.
        if (events < 1) throw new ParameterException(spec.commandLine(), "--events must be >= 1, got " + events);
        if (campaigns < 1)
            throw new ParameterException(spec.commandLine(), "--campaigns must be >= 1, got " + campaigns);
        RecountConfig cfg = RecountConfig.fromEnvironment(config);
        EventTimeSettings time = cfg.eventTime();
        // Read with recount's own rules first: a bad file is a usage error here as everywhere.
        MetricSets sets = MetricSets.fromConfig(cfg);
        String targetTopic = topic != null ? topic : cfg.topics().input();
        int parts = file != null
                ? (partitions != null ? partitions : cfg.topics().inputPartitions())
                : topicPartitions(cfg, targetTopic);
        TrafficProfile profile;
        try {
            profile = profile(time, parts, sets);
            GeneratedAttributes.check(profile.attributes());
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e); // every input of the profile is an option or a setting
        }
        Path truthAt = truthDir != null
                ? truthDir
                : file != null ? Path.of(file + ".truth") : Path.of(cfg.get("local.home"), "generated", "seed-" + seed);

        long sent;
        TrafficTally tally;
        Truth truth;
        try (Progress progress = Progress.forCommand(out, "generate", Progress.expectedRecords(profile))) {
            if (file != null) {
                tally = new TrafficTally();
                Oracle oracle = TruthOracle.of(cfg);
                sent = writeFile(new TrafficGenerator(profile, tally), oracle, progress);
                truth = oracle.truth();
                truth.write(truthAt);
                tally.writeSummary(truthAt, truth);
            } else {
                TrafficRun.Result run = TrafficRun.toKafka(cfg, profile, targetTopic, rate, truthAt, progress);
                sent = run.sent();
                tally = run.tally();
                truth = run.truth();
            }
        }
        out.printf(
                "generate: %d records (%d valid in [%s, %s), %d tail, %d duplicates, %d invalid %s) -> %s%n",
                sent,
                tally.validMain(),
                profile.start(),
                profile.mainEnd(),
                tally.validTail(),
                tally.duplicates(),
                tally.invalidTotal(),
                tally.invalidByReason(),
                file != null ? file : "topic " + targetTopic);
        for (SetTruth s : truth.sets()) {
            out.printf(
                    "generate: set %s: %d keys, %s%n",
                    s.name(), s.rows().size(), totals(s.set().measureNames(), s.totals()));
        }
        out.printf(
                "generate: ground truth (the oracle's) in %s (%s, summary.json)%n",
                truthAt,
                String.join(
                        ", ",
                        truth.sets().stream()
                                .map(s -> s.name() + ".csv"
                                        + (s.attribution() != null ? ", " + s.name() + ".attribution.csv" : ""))
                                .toList()));
        out.flush();
        return 0;
    }

    /** "impressions 12, clicks 3, ..." */
    static String totals(java.util.List<String> names, java.util.List<java.math.BigInteger> values) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < names.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(names.get(i)).append(' ').append(values.get(i));
        }
        return b.toString();
    }

    TrafficProfile profile(EventTimeSettings time, int parts, MetricSets sets) {
        Duration spanD = Durations.parse(span);
        Duration tailD = tail != null ? Durations.parse(tail) : TrafficShape.closingTail(time);
        Instant startAt =
                start != null ? Instants.parseInstant(start) : TrafficShape.startClosedBy(Instant.now(), spanD, tailD);
        return new TrafficShape(campaigns, delayMedian, delayP99, tooLateShare, duplicateShare, invalidShare, quiet)
                .profile(time, startAt, spanD, tailD, events, seed, parts, sets.attributes());
    }

    /**
     * Writes the records as JSON lines, each judged by {@code oracle} as if stamped with its simulated arrival time
     * (as generate's Kafka records are; `produce` stamps the wall clock unless told otherwise).
     */
    private long writeFile(TrafficGenerator generator, Oracle oracle, Progress progress) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        long n = 0;
        try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            while (generator.hasNext()) {
                GeneratedRecord r = generator.next();
                if (r.value() == null) continue; // a line cannot be null; the Kafka path sends these
                oracle.accept(r.value(), r.arrivalTs());
                os.write(r.value());
                os.write('\n');
                progress.tick(++n);
            }
        }
        return n;
    }

    static int topicPartitions(RecountConfig cfg, String topic) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cfg.get("kafka.bootstrap-servers"));
        try (Admin admin = Admin.create(p)) {
            return admin.describeTopics(java.util.List.of(topic))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS)
                    .get(topic)
                    .partitions()
                    .size();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(
                    "cannot read topic " + topic + " at " + cfg.get("kafka.bootstrap-servers")
                            + " (is the stack up? `./recount up`): "
                            + e.getCause().getMessage(),
                    e);
        }
    }
}
