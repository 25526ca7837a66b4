package dev.recount.stream.run;

import dev.recount.core.sets.MetricSet;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;

/**
 * What `stream` notes about one run of the job, in {@code <checkpoint-dir>/<job-id>/recount-run.properties}, next
 * to that run's checkpoints. Written before the job is submitted, and again when a --bounded run has finished.
 *
 * @param setWindowMillis  per metric set, the size of its windows (a record of a release before metric sets gives one
 *                         size: the default set's)
 * @param closedUntil      windows ending at or before this are final for this run (Long.MIN_VALUE: none)
 * @param stopOffsets      a --bounded run's stopping offsets; null for an unbounded run
 * @param finalClosedUntil set when a --bounded run finished: the end of the last window it flushed
 * @param lineage          the chain of runs this run continues: the same as the run it restored, else new (its
 *                         checkpoint and batch numbers start again); null in records of older versions
 */
public record RunRecord(
        long startedAt,
        String inputTopic,
        Map<String, Long> setWindowMillis,
        boolean bounded,
        long closedUntil,
        Map<TopicPartition, Long> stopOffsets,
        boolean finished,
        long finalClosedUntil,
        String lineage) {

    public RunRecord {
        setWindowMillis = Map.copyOf(setWindowMillis);
        stopOffsets = stopOffsets == null ? null : Map.copyOf(stopOffsets);
        if (bounded != (stopOffsets != null))
            throw new IllegalArgumentException("a bounded run has stop offsets, an unbounded one none");
    }

    public RunRecord finishedWith(long finalClosedUntil) {
        return new RunRecord(
                startedAt,
                inputTopic,
                setWindowMillis,
                bounded,
                closedUntil,
                stopOffsets,
                true,
                finalClosedUntil,
                lineage);
    }

    String toProperties() {
        Properties p = new Properties();
        p.setProperty("started-at", Long.toString(startedAt));
        p.setProperty("input-topic", inputTopic);
        p.setProperty(SET_WINDOWS, formatWindows(setWindowMillis));
        // What the release before metric sets reads: a rollback to it still finds its one window size.
        Long defaultWindow = setWindowMillis.get(MetricSet.DEFAULT);
        if (defaultWindow != null) p.setProperty(WINDOW_SIZE, Long.toString(defaultWindow));
        p.setProperty("mode", bounded ? "bounded" : "unbounded");
        p.setProperty("closed-until", Long.toString(closedUntil));
        if (stopOffsets != null) p.setProperty("stop-offsets", formatOffsets(stopOffsets));
        p.setProperty("finished", Boolean.toString(finished));
        if (finished) p.setProperty("final-closed-until", Long.toString(finalClosedUntil));
        if (lineage != null) p.setProperty("lineage", lineage);
        StringWriter out = new StringWriter();
        try {
            p.store(out, "recount stream run; see streaming-job/README.md");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toString();
    }

    static RunRecord fromProperties(String text) {
        Properties p = new Properties();
        try {
            p.load(new StringReader(text));
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
        boolean bounded = "bounded".equals(required(p, "mode"));
        boolean finished = Boolean.parseBoolean(p.getProperty("finished", "false"));
        return new RunRecord(
                Long.parseLong(required(p, "started-at")),
                required(p, "input-topic"),
                p.getProperty(SET_WINDOWS) != null
                        ? parseWindows(p.getProperty(SET_WINDOWS))
                        : Map.of(MetricSet.DEFAULT, Long.parseLong(required(p, WINDOW_SIZE))),
                bounded,
                Long.parseLong(required(p, "closed-until")),
                bounded ? parseOffsets(required(p, "stop-offsets")) : null,
                finished,
                finished ? Long.parseLong(required(p, "final-closed-until")) : Long.MIN_VALUE,
                p.getProperty("lineage"));
    }

    private static final String SET_WINDOWS = "set-windows-ms";
    private static final String WINDOW_SIZE = "window-size-ms";

    /** Set names are [a-z][a-z0-9_]*, so ',' and '=' are safe separators. */
    static String formatWindows(Map<String, Long> windows) {
        StringBuilder b = new StringBuilder();
        new TreeMap<>(windows)
                .forEach((set, ms) -> b.append(b.length() == 0 ? "" : ",")
                        .append(set)
                        .append('=')
                        .append(ms));
        return b.toString();
    }

    static Map<String, Long> parseWindows(String text) {
        Map<String, Long> windows = new java.util.HashMap<>();
        if (text.isBlank()) return windows;
        for (String entry : text.split(",")) {
            int eq = entry.indexOf('=');
            windows.put(entry.substring(0, eq), Long.parseLong(entry.substring(eq + 1)));
        }
        return windows;
    }

    private static String required(Properties p, String key) {
        String v = p.getProperty(key);
        if (v == null) throw new IllegalArgumentException("missing '" + key + "'");
        return v;
    }

    /** Kafka topic names are [a-zA-Z0-9._-], so '|', ',' and '=' are safe separators. */
    static String formatOffsets(Map<TopicPartition, Long> offsets) {
        Map<String, Long> sorted = new TreeMap<>();
        offsets.forEach((tp, o) -> sorted.put(tp.topic() + '|' + tp.partition(), o));
        StringBuilder b = new StringBuilder();
        sorted.forEach((k, v) ->
                b.append(b.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return b.toString();
    }

    static Map<TopicPartition, Long> parseOffsets(String text) {
        Map<TopicPartition, Long> offsets = new java.util.HashMap<>();
        if (text.isBlank()) return Map.of();
        for (String entry : text.split(",")) {
            int bar = entry.lastIndexOf('|');
            int eq = entry.indexOf('=', bar);
            offsets.put(
                    new TopicPartition(entry.substring(0, bar), Integer.parseInt(entry.substring(bar + 1, eq))),
                    Long.parseLong(entry.substring(eq + 1)));
        }
        return offsets;
    }
}
