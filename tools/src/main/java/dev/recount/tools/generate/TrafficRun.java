package dev.recount.tools.generate;

import dev.recount.core.config.RecountConfig;
import dev.recount.oracle.Oracle;
import dev.recount.oracle.Truth;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;

/**
 * One generation run to Kafka as a Java API: the records go to the topic, and the oracle, fed each record as it is
 * sent, keeps the ground truth of every metric set (what the pipeline must compute from them), which is written to a
 * directory. {@code generate} and the demo both call it.
 */
public final class TrafficRun {
    /**
     * @param sent  the records sent, invalid and duplicate ones included
     * @param tally what the generator meant to send
     * @param truth the oracle's truth of the records sent, per metric set
     */
    public record Result(long sent, TrafficTally tally, Truth truth) {}

    private TrafficRun() {}

    /**
     * Sends {@code profile}'s traffic to {@code topic} at {@code kafka.bootstrap-servers} of {@code config}, at most
     * {@code ratePerSecond} records a second (0: as fast as possible), and writes the truth into {@code truthDir}
     * ({@code <set>.csv}, {@code <set>.attribution.csv}, {@code summary.json}).
     */
    public static Result toKafka(
            RecountConfig config,
            TrafficProfile profile,
            String topic,
            double ratePerSecond,
            Path truthDir,
            Progress progress)
            throws IOException {
        TrafficTally tally = new TrafficTally();
        Oracle oracle = TruthOracle.of(config);
        long sent = KafkaTrafficSender.send(
                config.get("kafka.bootstrap-servers"),
                topic,
                judgedAsSent(new TrafficGenerator(profile, tally), oracle),
                ratePerSecond,
                progress);
        Truth truth = oracle.truth();
        truth.write(truthDir);
        tally.writeSummary(truthDir, truth);
        return new Result(sent, tally, truth);
    }

    /**
     * {@code records}, each handed to {@code oracle} as it is taken to be sent: value and record timestamp, in send
     * order.
     */
    static Iterator<GeneratedRecord> judgedAsSent(Iterator<GeneratedRecord> records, Oracle oracle) {
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return records.hasNext();
            }

            @Override
            public GeneratedRecord next() {
                GeneratedRecord r = records.next();
                oracle.accept(r.value(), r.arrivalTs());
                return r;
            }
        };
    }
}
