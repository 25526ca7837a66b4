package dev.recount.stream.attribution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.attribution.Attribution;
import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.window.WindowKey;
import dev.recount.db.sets.SetTables;
import dev.recount.db.tables.StreamAttributionMetricsTable;
import dev.recount.stream.run.RunningJob;
import dev.recount.stream.run.StreamRun;
import dev.recount.stream.testutils.FlinkCluster;
import dev.recount.stream.testutils.StreamTestStack;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole job with attribution on (Flink MiniCluster, real Kafka broker and PostgreSQL), over generated traffic:
 * impressions with request ids, clicks and conversions that follow them by heavy-tailed delays (some beyond the
 * attribution window), some with none, an unknown one or an impression after them, duplicate sends, and records
 * arriving out of order (a click before its impression). Every record is on time, so the stream must equal core's
 * rule applied to everything sent, key by key, after a bounded run commits.
 */
class AttributionStreamITCase {
    @RegisterExtension
    static final FlinkCluster FLINK = new FlinkCluster(2);

    private static final Instant START = Instant.parse("2026-11-29T08:00:00Z");
    private static final long SECOND = 1_000;
    private static final long MINUTE = 60_000;
    private static final long ATTRIBUTION_WINDOW = 5 * MINUTE;
    private static final Duration WAIT = Duration.ofMinutes(3);

    private final StreamTestStack stack = new StreamTestStack();

    @Test
    void streamAttributionEqualsTheRuleOnGeneratedTraffic(@TempDir Path home) throws Exception {
        String input = stack.createTopic("attribution", 1);
        StreamTestStack.Job job = stack.newJob(
                input,
                home,
                Map.of(
                        "window.size",
                        "1m",
                        "watermark.out-of-orderness",
                        "10s",
                        "window.allowed-lateness",
                        "1m",
                        "watermark.idleness",
                        "5s",
                        "stream.parallelism",
                        "2",
                        "attribution.enabled",
                        "true",
                        "attribution.window",
                        "5m"));
        List<Sent> traffic = traffic(new SplittableRandom(7), 4_000, 30 * MINUTE);
        try (KafkaProducer<byte[], byte[]> producer = stack.producer()) {
            for (Sent s : traffic) {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(
                        input,
                        0,
                        s.arrival,
                        s.event.campaignId.getBytes(StandardCharsets.UTF_8),
                        EventJson.toJson(s.event).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }

        RunningJob run = StreamRun.start(job.settings(), true, false, FLINK.environments(), line -> {});
        assertThat(run.awaitEnd(WAIT)).isEqualTo(RunningJob.Outcome.FINISHED);

        Attribution reference = new Attribution(new AttributionRule(ATTRIBUTION_WINDOW));
        traffic.forEach(s -> reference.add(s.event));
        MetricSet set = job.settings().sets().defaultSet().orElseThrow();
        Map<WindowKey, AttributionMetrics> expected = reference.perWindow(set);
        Map<WindowKey, AttributionMetrics> actual = new HashMap<>();
        try (Connection c = stack.stack().adminConnection()) {
            c.setSchema(job.schema());
            for (StreamAttributionMetricsTable.Row r : new StreamAttributionMetricsTable(new SetTables(set))
                    .readRange(c, START.toEpochMilli() - 60 * MINUTE, START.toEpochMilli() + 120 * MINUTE)) {
                actual.put(r.attribution().key(), r.attribution().metrics());
            }
        }
        assertThat(actual).isEqualTo(expected);
        AttributionMetrics total = expected.values().stream().reduce(AttributionMetrics.ZERO, AttributionMetrics::plus);
        assertThat(total.attributedClicks()).isPositive();
        assertThat(total.attributedConversions()).isPositive();
        assertThat(total.unattributedClicks()).isPositive();
    }

    record Sent(AdEvent event, long arrival) {}

    /**
     * {@code n} events over {@code span} in arrival order: each arrives up to 8 s after its event time (less than the
     * out-of-orderness, so none is late), 3 % are sent twice.
     */
    static List<Sent> traffic(SplittableRandom random, int n, long span) {
        long t0 = START.toEpochMilli();
        List<AdEvent> impressions = new ArrayList<>();
        List<String> promised = new ArrayList<>();
        List<Sent> sent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long ts = t0 + (long) i * span / n;
            String campaign = "c" + random.nextInt(2);
            double u = random.nextDouble();
            AdEvent e;
            if (u < 0.8 || impressions.isEmpty()) {
                String request = !promised.isEmpty()
                        ? promised.remove(0)
                        : random.nextDouble() < 0.02 && !impressions.isEmpty()
                                ? impressions.get(impressions.size() - 1).requestId
                                : "req-" + i;
                e = new AdEvent("imp-" + i, EventType.IMPRESSION, ts, campaign, "web", 3_000, request, null, 0, 0, 0);
                impressions.add(e);
            } else {
                EventType type = random.nextDouble() < 0.8 ? EventType.CLICK : EventType.CONVERSION;
                double v = random.nextDouble();
                String request;
                if (v < 0.05) {
                    request = null;
                } else if (v < 0.08) {
                    request = "unknown-" + i;
                } else if (v < 0.11) {
                    request = "promised-" + i; // the next impression gets it: after this click in event time
                    promised.add(request);
                } else {
                    // Heavy-tailed delay back to an impression: mostly seconds, sometimes beyond the 5 min window.
                    long delay = (long) (20 * SECOND * Math.exp(1.5 * random.nextGaussian()));
                    long target = ts - delay;
                    AdEvent chosen = impressions.get(0);
                    for (int k = impressions.size() - 1; k >= 0; k--) {
                        if (impressions.get(k).eventTs <= target) {
                            chosen = impressions.get(k);
                            break;
                        }
                    }
                    request = chosen.requestId;
                }
                e = new AdEvent(
                        "f-" + i, type, ts, campaign, "web", 1 + random.nextLong(900_000), request, null, 0, 0, 0);
            }
            long arrival = ts + random.nextLong(8 * SECOND);
            sent.add(new Sent(e, arrival));
            if (random.nextDouble() < 0.03) sent.add(new Sent(e, arrival + random.nextLong(SECOND)));
        }
        sent.sort(Comparator.comparingLong(Sent::arrival));
        return sent;
    }
}
