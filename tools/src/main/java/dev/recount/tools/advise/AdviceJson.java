package dev.recount.tools.advise;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.cli.JsonOutput;
import dev.recount.core.config.Durations;
import dev.recount.tools.advise.WatermarkAdvisor.Advice;
import dev.recount.tools.advise.WatermarkAdvisor.Candidate;
import dev.recount.tools.advise.WatermarkAdvisor.PartitionStats;
import dev.recount.tools.advise.WatermarkAdvisor.Recommendation;
import java.time.Duration;
import java.time.Instant;

/**
 * What {@code advise --json} prints: the facts of {@link AdviceReport} as one JSON object. Delays and gaps are in
 * milliseconds, percentiles nearest-rank as in the text; settings both in milliseconds and as the text a
 * config file takes.
 */
final class AdviceJson {
    private AdviceJson() {}

    /** What was read, before any advice: the first line of the text. */
    record ReadFacts(
            String topic,
            String bootstrapServers,
            Instant from,
            Instant to,
            KafkaArrivalReader.Read read,
            long maxRecords,
            ArrivalSample sample) {}

    static ObjectNode of(ReadFacts facts, Advice advice) {
        ObjectNode json = JsonOutput.object();
        json.put("topic", facts.topic());
        json.put("bootstrap_servers", facts.bootstrapServers());
        json.put("from", facts.from().toString());
        json.put("to", facts.to().toString());
        json.put("records", facts.read().records());
        json.put("events", facts.sample().events());
        json.put("invalid", facts.sample().invalid());
        json.put("duplicates", facts.sample().duplicates());
        json.put("outside_range", facts.read().outsideRange());
        // Stopped at --max-records: partitions may be covered unevenly.
        json.put("truncated", facts.read().truncated());
        if (facts.read().truncated()) json.put("max_records", facts.maxRecords());

        ArrayNode partitions = json.putArray("partitions");
        for (PartitionStats p : advice.partitions()) {
            ObjectNode node = partitions.addObject();
            node.put("partition", p.partition());
            node.put("events", p.delays().count());
            node.set("delay_ms", percentiles(p.delays()));
            ObjectNode gaps = node.putObject("gap_ms");
            if (!p.gaps().isEmpty()) gaps.put("p99_9", p.gaps().percentile(0.999));
            ArrayNode largest = gaps.putArray("largest");
            for (long g : p.gaps().largest(3)) largest.add(g);
        }
        ObjectNode all = json.putObject("all");
        all.put("events", advice.delays().count());
        all.set("delay_ms", percentiles(advice.delays()));

        Recommendation r = advice.recommendation();
        ObjectNode recommendation = json.putObject("recommendation");
        setting(recommendation, "watermark.out-of-orderness", r.outOfOrderness());
        setting(recommendation, "window.allowed-lateness", r.allowedLateness());
        setting(recommendation, "watermark.idleness", r.idleness());
        recommendation.put("largest_gap_p99_9_ms", advice.largestGapP999());
        if (!advice.gaps().isEmpty()) {
            recommendation.put(
                    "gaps_longer_than_idleness_share",
                    advice.gaps().shareAbove(r.idleness().toMillis()));
        }

        ArrayNode candidates = json.putArray("candidates");
        for (Candidate c : advice.candidates()) {
            ObjectNode node = candidates.addObject();
            node.put("label", c.label());
            setting(node, "window.size", c.settings().windowSize());
            setting(node, "watermark.out-of-orderness", c.settings().outOfOrderness());
            setting(node, "window.allowed-lateness", c.settings().allowedLateness());
            setting(node, "watermark.idleness", c.settings().idleness());
            node.put("events", c.outcome().events());
            node.put("on_time", c.outcome().onTime());
            node.put("late", c.outcome().late());
            node.put("too_late", c.outcome().tooLate());
            node.put("late_share", c.outcome().lateShare());
            node.put("too_late_share", c.outcome().tooLateShare());
        }
        return json;
    }

    private static ObjectNode percentiles(Distribution d) {
        ObjectNode node = JsonOutput.object();
        for (double q : WatermarkAdvisor.QUANTILES) {
            node.put("p" + WatermarkAdvisor.percentLabel(q).replace('.', '_'), d.percentile(q));
        }
        node.put("max", d.max());
        return node;
    }

    /** A setting as its config key: the text a config file takes, and its milliseconds. */
    private static void setting(ObjectNode node, String key, Duration value) {
        ObjectNode setting = node.putObject(key);
        setting.put("value", Durations.format(value));
        setting.put("ms", value.toMillis());
    }
}
