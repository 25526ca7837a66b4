package dev.recount.tools.generate;

import dev.recount.core.config.RecountConfig;
import java.io.IOException;
import java.nio.file.Path;

/**
 * One generation run to Kafka as a Java API: the records go to the topic, the ground truth (what the pipeline must
 * compute from them) is kept in memory and written to a directory. {@code generate} and the demo both call it.
 */
public final class TrafficRun {
    /**
     * @param sent  the records sent, invalid and duplicate ones included
     * @param truth the exact expected metrics of what was sent
     */
    public record Result(long sent, GroundTruth truth) {}

    private TrafficRun() {}

    /**
     * Sends {@code profile}'s traffic to {@code topic} at {@code kafka.bootstrap-servers} of {@code config}, at most
     * {@code ratePerSecond} records a second (0: as fast as possible), and writes the ground truth into
     * {@code truthDir} (expected.csv, expected_attribution.csv, summary.json).
     */
    public static Result toKafka(
            RecountConfig config,
            TrafficProfile profile,
            String topic,
            double ratePerSecond,
            Path truthDir,
            Progress progress)
            throws IOException {
        GroundTruth truth = new GroundTruth(
                config.eventTime().windows(), config.attribution().rule());
        TrafficGenerator generator = new TrafficGenerator(profile, truth);
        long sent = KafkaTrafficSender.send(
                config.get("kafka.bootstrap-servers"), topic, generator, ratePerSecond, progress);
        truth.write(truthDir);
        return new Result(sent, truth);
    }
}
