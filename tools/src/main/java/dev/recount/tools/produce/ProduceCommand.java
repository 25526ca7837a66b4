package dev.recount.tools.produce;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.recount.core.cli.OldName;
import dev.recount.core.config.RecountConfig;
import dev.recount.tools.LocalConnection;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.producer.ProducerRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code produce} (CONTRACT §5): sends a file of JSON lines to Kafka in file order, one record per line. The value
 * is the line's raw bytes (invalid lines too: recognising them is the streaming job's work, which dead-letters
 * them with a reason); the key is the line's {@code campaign_id} when the line is a JSON object with a string
 * campaign_id, so one campaign's events share a partition and keep their order; otherwise the key is null.
 *
 * <p>Delivery: exactly once, also across failures and reruns. Lines go out in Kafka transactions of at most
 * {@code --batch} lines (or one second), each of which also moves a progress marker — a consumer-group offset
 * holding the number of lines done, committed in the same transaction — for this file's content and topic. When
 * the broker goes away, `produce` stops and says how far it got; running the same command again continues after
 * the last committed line instead of sending the file again ({@code --from-earliest} does that deliberately).
 * Consumers that read with isolation.level=read_committed (recount's stream job does) see each line once.
 * Blank lines carry no record and are skipped (and counted).
 */
@Command(
        name = "produce",
        mixinStandardHelpOptions = true,
        description = {
            "Send a file of JSON lines to Kafka, one record per line, in file order, keyed by campaign_id.",
            "Exactly once: if it stops (broker away, Ctrl-C), running the same command again continues after the "
                    + "last line that was committed."
        })
@OldName(name = "--from-start", now = "--from-earliest")
public final class ProduceCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(1);
    private static final Duration TRANSACTION_EVERY = Duration.ofSeconds(1);

    @Spec
    CommandSpec spec;

    @Option(
            names = "--file",
            paramLabel = "F",
            required = true,
            description = "File of JSON lines (one event per line).")
    Path file;

    @Option(
            names = "--rate",
            paramLabel = "N",
            defaultValue = "0",
            description = "At most N records per second (default: 0 = as fast as possible).")
    double rate;

    @Option(names = "--topic", paramLabel = "T", description = "Topic (default: topics.input from the config).")
    String topic;

    @Option(
            names = "--batch",
            paramLabel = "N",
            defaultValue = "1000",
            description =
                    "At most N lines per transaction (default: ${DEFAULT-VALUE}); a transaction also ends every second.")
    int batch;

    @Option(
            names = "--from-earliest",
            description = "Send the whole file again, even if an earlier run sent part or all of it.")
    boolean fromStart;

    /** What a record's Kafka timestamp is: the job judges event_ts against it (validation.max-past/-future). */
    enum Timestamp {
        now,
        event
    }

    @Option(
            names = "--timestamp",
            paramLabel = "now|event",
            defaultValue = "now",
            description = "Kafka record timestamp: now (the wall clock, as a live producer; default) or event (the "
                    + "line's event_ts, to replay old events: with now, events more than an hour old never move the "
                    + "watermark, and those older than validation.max-past are dead-lettered as timestamp errors).")
    Timestamp timestamp;

    @Option(
            names = "--bootstrap-servers",
            paramLabel = "HOST:PORT",
            description = "Kafka (default: $KAFKA_BOOTSTRAP_SERVERS or the config's kafka.bootstrap-servers; "
                    + "else the local stack's local.env).")
    String bootstrapServers;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Config file over the built-in defaults (default: $RECOUNT_CONFIG if set).")
    Path configFile;

    @Override
    public Integer call() {
        if (!(rate >= 0) || Double.isInfinite(rate)) {
            throw new ParameterException(spec.commandLine(), "--rate must be a number >= 0, got " + rate);
        }
        if (batch < 1) throw new ParameterException(spec.commandLine(), "--batch must be >= 1, got " + batch);
        RecountConfig config = RecountConfig.fromEnvironment(configFile);
        String target = topic != null ? topic : config.topics().input();
        String bootstrap = LocalConnection.kafkaBootstrapServers(config, bootstrapServers);
        PrintWriter out = spec.commandLine().getOut();

        String fileId = fileId(file);
        TimeRule timeRule = new TimeRule(timestamp, config.validation(), out, file);
        Counts counts = new Counts();
        long start = System.nanoTime();
        long nextProgress = start + PROGRESS_EVERY.toNanos();
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
                ProduceProgress progress = new ProduceProgress(bootstrap, target, fileId)) {
            long done = fromStart ? 0 : progress.linesDone();
            if (done > 0) {
                out.printf(
                        "produce: an earlier run sent lines 1-%,d of %s to %s already; continuing after them "
                                + "(--from-earliest sends everything again)%n",
                        done, file, target);
            }
            long lineNo = 0;
            byte[] line;
            long txnStart = System.nanoTime();
            int inTxn = 0;
            while ((line = readLine(in)) != null) {
                lineNo++;
                if (lineNo <= done) continue;
                if (isBlank(line)) {
                    counts.blank++;
                } else {
                    if (rate > 0) RecordProducers.pace(start, counts.sent, rate);
                    LineFields fields = LineFields.of(line);
                    byte[] key = fields.key();
                    if (key == null) counts.unkeyed++;
                    if (inTxn == 0) progress.begin();
                    progress.send(new ProducerRecord<>(
                            target, null, timeRule.recordTimestamp(fields.eventTs(), lineNo), key, line));
                    inTxn++;
                    counts.sent++;
                }
                if (inTxn >= batch || inTxn > 0 && System.nanoTime() - txnStart >= TRANSACTION_EVERY.toNanos()) {
                    progress.commit(lineNo);
                    done = lineNo;
                    inTxn = 0;
                    txnStart = System.nanoTime();
                }
                if (System.nanoTime() >= nextProgress) {
                    out.printf("sent %,d records to %s (lines 1-%,d committed)%n", counts.sent, target, done);
                    out.flush();
                    nextProgress = System.nanoTime() + PROGRESS_EVERY.toNanos();
                }
            }
            if (lineNo > done) {
                if (inTxn == 0) progress.begin(); // only blank lines since the last commit: move the marker alone
                progress.commit(lineNo);
            }
            timeRule.summarise();
            double seconds = Math.max(1e-9, (System.nanoTime() - start) / 1e9);
            out.printf(
                    "produced %d records from %s to %s at %s in %.1f s (%d without a campaign_id key%s)%n",
                    counts.sent,
                    file,
                    target,
                    bootstrap,
                    seconds,
                    counts.unkeyed,
                    counts.blank == 0 ? "" : ", " + counts.blank + " blank lines skipped");
            return 0;
        } catch (NoSuchFileException e) {
            throw new IllegalStateException("no such file: " + file);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + file + ": " + e.getMessage(), e);
        } catch (ProduceProgress.Stopped e) {
            throw new IllegalStateException(
                    "sending to " + target + " at " + bootstrap + " stopped: " + e.getMessage()
                            + "; lines 1-" + e.linesDone + " of " + file
                            + " are sent; run the same command again to continue"
                            + " after line " + e.linesDone,
                    e.getCause());
        }
    }

    /** Identifies the file's content (not its name): a rerun with the same content continues, a changed file starts over. */
    static String fileId(Path file) {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) sha.update(buf, 0, n);
            return HexFormat.of().formatHex(sha.digest(), 0, 12);
        } catch (NoSuchFileException e) {
            throw new IllegalStateException("no such file: " + file);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + file + ": " + e.getMessage(), e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The record timestamp of each line, and the warning a replay of an old file needs: with {@code --timestamp now}
     * a line whose event_ts is outside what validation accepts around now (older than validation.max-past, or
     * ahead by more than validation.max-future) will be dead-lettered as a timestamp error by the job. The first
     * such line is named at once; how many there were is said at the end.
     */
    static final class TimeRule {
        private final Timestamp mode;
        private final dev.recount.core.config.ValidationSettings validation;
        private final PrintWriter out;
        private final Path file;
        private long outside;

        TimeRule(Timestamp mode, dev.recount.core.config.ValidationSettings validation, PrintWriter out, Path file) {
            this.mode = mode;
            this.validation = validation;
            this.out = out;
            this.file = file;
        }

        /** null: the producer's clock (Kafka's default), else the line's event_ts when asked for and present. */
        Long recordTimestamp(Long eventTs, long lineNo) {
            if (mode == Timestamp.event) return eventTs; // a line without one is invalid anyway: now is fine
            long now = System.currentTimeMillis();
            if (eventTs != null
                    && (eventTs < now - validation.maxPast().toMillis()
                            || eventTs > now + validation.maxFuture().toMillis())) {
                if (outside++ == 0) {
                    out.printf(
                            "produce: warning: line %,d has event_ts %s, outside what the job accepts around now "
                                    + "(max-past %s, max-future %s): it will be dead-lettered as a timestamp error. "
                                    + "Replaying old events? Use --timestamp event.%n",
                            lineNo,
                            java.time.Instant.ofEpochMilli(eventTs),
                            dev.recount.core.config.Durations.format(validation.maxPast()),
                            dev.recount.core.config.Durations.format(validation.maxFuture()));
                    out.flush();
                }
            }
            return null;
        }

        void summarise() {
            if (outside > 0) {
                out.printf(
                        "produce: warning: %,d line(s) of %s had an event_ts the job will refuse against the "
                                + "current time (see above)%n",
                        outside, file);
            }
        }
    }

    /**
     * What `produce` reads from a line, parsed once: the record key (the campaign_id as UTF-8 when the line is a
     * JSON object with a string campaign_id) and the event_ts when it is an integer; null where absent.
     */
    record LineFields(byte[] key, Long eventTs) {
        static LineFields of(byte[] line) {
            try {
                JsonNode node = JSON.readTree(line);
                if (node == null || !node.isObject()) return new LineFields(null, null);
                JsonNode campaign = node.get("campaign_id");
                JsonNode ts = node.get("event_ts");
                return new LineFields(
                        campaign != null && campaign.isTextual()
                                ? campaign.textValue().getBytes(StandardCharsets.UTF_8)
                                : null,
                        ts != null && ts.isIntegralNumber() && ts.canConvertToLong() ? ts.longValue() : null);
            } catch (IOException e) {
                return new LineFields(null, null);
            }
        }
    }

    /** The record key: the line's campaign_id as UTF-8 when the line is a JSON object with a string campaign_id. */
    static byte[] keyOf(byte[] line) {
        return LineFields.of(line).key();
    }

    /**
     * The next line's raw bytes without its line terminator ({@code \n} or {@code \r\n}); null at the end. Bytes,
     * not characters: a line that is not valid UTF-8 is sent exactly as it is, for the job to dead-letter.
     */
    static byte[] readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        int b;
        boolean any = false;
        while ((b = in.read()) != -1) {
            any = true;
            if (b == '\n') break;
            line.write(b);
        }
        if (!any) return null;
        byte[] bytes = line.toByteArray();
        if (bytes.length > 0 && bytes[bytes.length - 1] == '\r') {
            return Arrays.copyOf(bytes, bytes.length - 1);
        }
        return bytes;
    }

    static boolean isBlank(byte[] line) {
        for (byte b : line) {
            if (b != ' ' && b != '\t' && b != '\r') return false;
        }
        return true;
    }

    private static final class Counts {
        long sent;
        long unkeyed;
        long blank;
    }
}
