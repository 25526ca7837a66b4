package dev.recount.tools.advise;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.config.ValidationSettings;
import dev.recount.core.event.EventValidator;
import dev.recount.core.window.EventTime;
import dev.recount.core.window.WindowAlignment;
import dev.recount.tools.advise.WatermarkAdvisor.Advice;
import dev.recount.tools.advise.WatermarkAdvisor.Candidate;
import dev.recount.tools.advise.WatermarkAdvisor.Recommendation;
import dev.recount.tools.advise.WatermarkSimulation.Outcome;
import dev.recount.tools.advise.WatermarkSimulation.Settings;
import dev.recount.tools.generate.GeneratedRecord;
import dev.recount.tools.generate.TrafficGenerator;
import dev.recount.tools.generate.TrafficProfile;
import dev.recount.tools.generate.TrafficTally;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The advisor's maths on data whose delay distribution is known, and its replay on hand-computed cases. */
class AdvisorTest {
    static final long T0 = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    static final Duration MINUTE = Duration.ofMinutes(1);
    /** Standard normal quantiles of 0.5, 0.9, 0.99, 0.999. */
    static final double Z90 = 1.2815515655446004;

    static final double Z99 = 2.3263478740408408;
    static final double Z999 = 3.090232306167813;

    // ---- percentiles ---------------------------------------------------------------------------------------------

    @Test
    void percentilesAreNearestRank() {
        Distribution d = Distribution.of(new long[] {50, 10, 40, 20, 30, 60, 70, 80, 90, 100});

        assertThat(d.percentile(0.5)).isEqualTo(50);
        assertThat(d.percentile(0.9)).isEqualTo(90);
        assertThat(d.percentile(0.99)).isEqualTo(100);
        assertThat(d.percentile(0.1)).isEqualTo(10);
        assertThat(d.percentile(1.0)).isEqualTo(100);
        assertThat(d.shareAbove(70)).isEqualTo(0.3);
        assertThat(d.largest(2)).containsExactly(100, 90);
        assertThatThrownBy(() -> Distribution.empty().percentile(0.5)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> d.percentile(0)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Log-normal delays with median 430 ms and p99 7 s (so p99.9 = 17.5 s): chosen so each recommended setting lies
     * well inside a rounding step, and the recommendation is the same for any seed.
     */
    @Test
    void percentilesAndRecommendationMatchAKnownLogNormalDelay() {
        double median = 430;
        double sigma = Math.log(7_000 / median) / Z99;
        int n = 200_000;
        ArrivalSample sample = logNormalSample(n, median, sigma, new SplittableRandom(20261128L));

        Advice advice = WatermarkAdvisor.advise(sample, EventTimeSettings.defaults());
        Distribution delays = advice.delays();

        assertThat(delays.count()).isEqualTo(n);
        assertThat((double) delays.percentile(0.5)).isCloseTo(median, within(median * 0.03));
        assertThat((double) delays.percentile(0.9))
                .isCloseTo(median * Math.exp(Z90 * sigma), within(median * Math.exp(Z90 * sigma) * 0.03));
        assertThat((double) delays.percentile(0.99)).isCloseTo(7_000, within(7_000 * 0.05));
        double p999 = median * Math.exp(Z999 * sigma);
        assertThat((double) delays.percentile(0.999)).isCloseTo(p999, within(p999 * 0.08));

        // p99 ≈ 7 s → 10 s; p99.9 − 10 s ≈ 7.5 s → 10 s.
        assertThat(advice.recommendation().outOfOrderness()).isEqualTo(Duration.ofSeconds(10));
        assertThat(advice.recommendation().allowedLateness()).isEqualTo(Duration.ofSeconds(10));

        // The recommendation keeps re-firings below 1 % (only events beyond p99 can be late, and only if their
        // delay also exceeds the rest of their window) and too-late events at or below 0.1 %; out-of-orderness at
        // the median re-fires far more.
        Candidate recommended = candidate(advice, "recommended");
        assertThat(recommended.outcome().late()).isPositive();
        assertThat(recommended.outcome().lateShare()).isLessThanOrEqualTo(0.01);
        assertThat(recommended.outcome().tooLateShare()).isLessThanOrEqualTo(0.001);
        Candidate atMedian = candidate(advice, "out-of-orderness at p50");
        assertThat(atMedian.outcome().lateShare())
                .isGreaterThan(5 * recommended.outcome().lateShare());
        Candidate noLateness = candidate(advice, "recommended, no lateness");
        assertThat(noLateness.outcome().tooLate())
                .isEqualTo(recommended.outcome().late() + recommended.outcome().tooLate());
    }

    @Test
    void settingsAreRoundedUpToReadableSteps() {
        assertThat(WatermarkAdvisor.roundUp(0)).isEqualTo(Duration.ZERO);
        assertThat(WatermarkAdvisor.roundUp(1)).isEqualTo(Duration.ofMillis(100));
        assertThat(WatermarkAdvisor.roundUp(1_000)).isEqualTo(Duration.ofSeconds(1));
        assertThat(WatermarkAdvisor.roundUp(1_001)).isEqualTo(Duration.ofSeconds(2));
        assertThat(WatermarkAdvisor.roundUp(27_300)).isEqualTo(Duration.ofSeconds(30));
        assertThat(WatermarkAdvisor.roundUp(61_000)).isEqualTo(Duration.ofMinutes(2));
        assertThat(WatermarkAdvisor.roundUp(86_400_001)).isEqualTo(Duration.ofDays(2));
    }

    @Test
    void recommendationFollowsTheRules() {
        long[] delays = new long[1000];
        for (int i = 0; i < delays.length; i++)
            delays[i] = (i + 1) * 100L; // 100 ms .. 100 s, p99 = 99 s, p99.9 = 99.9 s
        Recommendation r = WatermarkAdvisor.recommend(Distribution.of(delays), 4_200);

        assertThat(r.outOfOrderness()).isEqualTo(Duration.ofMinutes(2)); // 99 s rounded up
        assertThat(r.allowedLateness()).isEqualTo(Duration.ZERO); // 2 min already covers p99.9
        assertThat(r.idleness()).isEqualTo(Duration.ofSeconds(5)); // 4.2 s rounded up

        Recommendation tiny = WatermarkAdvisor.recommend(Distribution.of(0, 1, 2), 0);
        assertThat(tiny.outOfOrderness()).isEqualTo(WatermarkAdvisor.MIN_OUT_OF_ORDERNESS);
        assertThat(tiny.idleness()).isEqualTo(WatermarkAdvisor.MIN_IDLENESS);
    }

    // ---- the replay ---------------------------------------------------------------------------------------------

    /**
     * One partition, 1 min windows, out-of-orderness 10 s, lateness 30 s. After the event at 70 s the watermark is
     * 59.999 s, so window [0, 60 s) has fired: an event of 5 s arriving then is late (re-firing); after the event at
     * 101 s the watermark is 90.999 s ≥ 59.999 s + 30 s, so an event of 30 s arriving then is too late.
     */
    @Test
    void replayClassifiesOnTimeLateAndTooLateAsTheJobWould() {
        ArrivalSample sample = new ArrivalSample.Builder(null)
                .addValid(0, T0, T0)
                .addValid(0, T0 + 70_000, T0 + 70_000)
                .addValid(0, T0 + 71_000, T0 + 5_000) // late
                .addValid(0, T0 + 101_000, T0 + 101_000)
                .addValid(0, T0 + 102_000, T0 + 30_000) // too late
                .addValid(0, T0 + 103_000, T0 + 95_000) // window [60 s, 120 s) is still open
                .build();

        Outcome o = WatermarkSimulation.run(
                sample, new Settings(MINUTE, Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofHours(1)));

        assertThat(o).isEqualTo(new Outcome(6, 4, 1, 1));
        // The last millisecond of a window: the event of 59.999 s at watermark 59.999 s is late, not on time.
        WindowAlignment windows = new WindowAlignment(60_000);
        assertThat(new EventTime(windows, 0).isTooLate(T0 + 59_999, T0 + 59_999))
                .isTrue();
    }

    /**
     * Partition 1 sends one event and goes quiet. With idleness 1 h it holds the job's watermark back, so a delayed
     * event on partition 0 is on time; with idleness 5 s it stops counting and the same event is late. (It arrives
     * 2 s after partition 0's previous event: a 5 s gap would make partition 0 idle too, and nothing would move.)
     */
    @Test
    void anIdlePartitionStopsHoldingTheWatermarkBackAfterIdleness() {
        ArrivalSample sample = new ArrivalSample.Builder(null)
                .addValid(1, T0, T0)
                .addValid(0, T0, T0)
                .addValid(0, T0 + 70_000, T0 + 70_000)
                .addValid(0, T0 + 72_000, T0 + 10_000)
                .build();

        Outcome held = WatermarkSimulation.run(
                sample, new Settings(MINUTE, Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofHours(1)));
        Outcome idle = WatermarkSimulation.run(
                sample, new Settings(MINUTE, Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(5)));

        assertThat(held).isEqualTo(new Outcome(4, 4, 0, 0));
        assertThat(idle).isEqualTo(new Outcome(4, 3, 1, 0));
    }

    // ---- realistic traffic ----------------------------------------------------------------------------------------

    /**
     * The generator's traffic (median delay 2 s, p99 20 s, with invalid and duplicate records) read through the
     * validator: invalid records and repeated ids are skipped, percentiles match the profile, and the recommendation
     * covers the delays it claims to.
     */
    @Test
    void generatedTrafficGivesItsDelayProfileBack() {
        TrafficProfile profile = new TrafficProfile(
                Instant.ofEpochMilli(T0),
                Duration.ofMinutes(30),
                Duration.ofMinutes(5),
                40_000,
                30,
                77L,
                3,
                Duration.ofSeconds(2),
                Duration.ofSeconds(20),
                0.0,
                Duration.ofHours(1),
                0.01,
                0.01,
                0.0,
                0.0,
                ValidationSettings.defaults());
        TrafficTally truth = new TrafficTally();
        List<GeneratedRecord> records = TrafficGenerator.all(profile, truth);
        ArrivalSample.Builder builder = new ArrivalSample.Builder(new EventValidator(ValidationSettings.defaults()));
        long offset = 0;
        for (GeneratedRecord r : records) builder.offer("ad-events", r.partition(), offset++, r.arrivalTs(), r.value());
        ArrivalSample sample = builder.build();

        assertThat(sample.events()).isEqualTo(truth.validMain() + truth.validTail());
        assertThat(sample.duplicates()).isEqualTo(truth.duplicates());
        assertThat(sample.invalid()).isEqualTo(truth.invalidTotal());
        assertThat(sample.partitionCount()).isEqualTo(3);

        Advice advice = WatermarkAdvisor.advise(sample, EventTimeSettings.defaults());
        assertThat((double) advice.delays().percentile(0.5)).isCloseTo(2_000, within(200.0));
        assertThat((double) advice.delays().percentile(0.99)).isCloseTo(20_000, within(2_000.0));
        for (WatermarkAdvisor.PartitionStats p : advice.partitions()) {
            assertThat((double) p.delays().percentile(0.5)).isCloseTo(2_000, within(300.0));
        }

        Recommendation r = advice.recommendation();
        assertThat(r.outOfOrderness()).isEqualTo(Duration.ofSeconds(30)); // p99 ≈ 20 s, rounded up
        assertThat(r.outOfOrderness().plus(r.allowedLateness()).toMillis())
                .isGreaterThanOrEqualTo(advice.delays().percentile(0.999));
        assertThat(r.idleness()).isBetween(Duration.ofSeconds(1), Duration.ofMinutes(1));
        Candidate recommended = candidate(advice, "recommended");
        assertThat(recommended.outcome().events()).isEqualTo(sample.events());
        assertThat(recommended.outcome().tooLateShare()).isLessThanOrEqualTo(0.002);
        assertThat(recommended.outcome().lateShare()).isLessThan(0.015);
        assertThat(candidate(advice, "current config").settings().outOfOrderness())
                .isEqualTo(Duration.ofSeconds(30));

        StringWriter text = new StringWriter();
        AdviceReport.print(advice, new PrintWriter(text));
        assertThat(text.toString())
                .contains("watermark.out-of-orderness=30s")
                .contains("window.allowed-lateness=" + dev.recount.core.config.Durations.format(r.allowedLateness()))
                .contains("watermark.idleness=")
                .contains("recommended")
                .contains("too late (backfill)");
    }

    // ---- helpers --------------------------------------------------------------------------------------------------

    /** One event every 10 ms of event time on one partition, each arriving a log-normal delay later, in arrival order. */
    static ArrivalSample logNormalSample(int n, double median, double sigma, SplittableRandom random) {
        long[][] events = new long[n][2];
        for (int i = 0; i < n; i++) {
            long eventTs = T0 + i * 10L;
            long delay = Math.round(median * Math.exp(sigma * gaussian(random)));
            events[i][0] = eventTs + delay;
            events[i][1] = eventTs;
        }
        Arrays.sort(events, (a, b) -> Long.compare(a[0], b[0]));
        ArrivalSample.Builder b = new ArrivalSample.Builder(null);
        for (long[] e : events) b.addValid(0, e[0], e[1]);
        return b.build();
    }

    static double gaussian(SplittableRandom random) {
        double u1 = 1 - random.nextDouble();
        double u2 = random.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }

    static Candidate candidate(Advice advice, String label) {
        return advice.candidates().stream()
                .filter(c -> c.label().equals(label))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no candidate '" + label + "' in " + advice.candidates()));
    }
}
