package dev.recount.tools.generate;

import dev.recount.core.attribution.AttributionRule;
import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.apache.kafka.common.utils.Utils;

/**
 * Synthetic ad traffic in arrival order, and a tally of what it meant to send ({@link TrafficTally}).
 *
 * <p>Events are drawn in event-time order; each becomes one record (two for a duplicate) whose arrival time
 * is event time plus a heavy-tailed delay. A priority queue re-orders them by arrival: once the generator has
 * reached event time {@code t}, no later draw can arrive before {@code t}, so everything queued before it is
 * final. Memory therefore stays at "records in flight", not the whole run.
 *
 * <p>Request ids follow how ad servers log them: every impression gets a request id of its own ({@code req-} and 16
 * hex digits), a few are logged twice under two event ids (a re-logged impression: same request id). A click or
 * conversion carries the request id of an impression of its campaign and channel that it follows by a heavy-tailed
 * delay (log-normal; clicks: median {@link #CLICK_DELAY_MEDIAN_MS} ms, p99 {@link #CLICK_DELAY_P99_MS} ms;
 * conversions later still), so some fall beyond the attribution window. Some carry none (the SDK dropped it), some
 * one no impression ever had (the impression was never logged), and some one whose impression comes later in event
 * time (a skewed device clock): those are not attributed ({@link AttributionRule}). Deterministic per seed.
 *
 * <p>Every event carries the attributes of {@link GeneratedAttributes} (slot, country, device), and the invalid records
 * include those that break a declared attribute's rule (a country outside its list, a slot id with a control
 * character) when the metric-sets file declares it.
 *
 * <p>Every record is checked with core's {@link EventValidator}, with the declared attributes, before it leaves: a
 * valid event must be valid and an invalid one must fail for the intended reason, so that the traffic is what the
 * tally says.
 */
public final class TrafficGenerator implements Iterator<GeneratedRecord> {
    private static final String[] CHANNELS = {"web", "ios", "android", "ctv", "email"};
    private static final double[] CHANNEL_WEIGHTS = {0.40, 0.25, 0.25, 0.07, 0.03};
    private static final double IMPRESSION_SHARE = 0.965;
    private static final double CLICK_SHARE = 0.03; // conversions: the remaining 0.5 %
    private static final double Z99 = 2.3263478740408408;
    /**
     * Impressions remembered per campaign and channel as attribution candidates for later clicks and conversions: the
     * latest of each {@link #HISTORY_BUCKET_MS} of event time, {@link #HISTORY_BUCKETS} buckets back (2 h 8 min), so a
     * delay far beyond the attribution window still finds its impression on a busy campaign.
     */
    private static final int HISTORY_BUCKETS = 256;

    private static final long HISTORY_BUCKET_MS = 30_000;
    /** Click delay after its impression, log-normal: a median of 90 s and a p99 of 45 min (beyond a 30 min window). */
    static final long CLICK_DELAY_MEDIAN_MS = 90_000;

    static final long CLICK_DELAY_P99_MS = 45 * 60_000;
    /** Conversions come later than clicks: a median of 5 min, p99 of 3 h. */
    static final long CONVERSION_DELAY_MEDIAN_MS = 5 * 60_000;

    static final long CONVERSION_DELAY_P99_MS = 3 * 3_600_000;
    /** Shares of clicks and conversions with no request id, with one no impression has, with a later impression's. */
    static final double NO_REQUEST_ID_SHARE = 0.03;

    static final double UNKNOWN_REQUEST_ID_SHARE = 0.02;
    static final double IMPRESSION_LATER_SHARE = 0.03;
    /** Share of impressions logged with the request id of an earlier impression of their campaign and channel. */
    static final double RELOGGED_IMPRESSION_SHARE = 0.01;

    private final TrafficProfile profile;
    private final EventValidator validator;
    private final TrafficTally tally;
    private final GeneratedAttributes attributes;
    /** The invalid samples the declared attributes make invalid: all but those of undeclared attributes. */
    private final InvalidSample[] invalidSamples;

    private final SplittableRandom random;
    private final String[] campaignIds;
    private final double[] campaignCumulative;
    private final int[] campaignPartition;
    private final long[] cpmMicros;
    private final long[] cpcMicros;
    private final long[] cpaMicros;
    /** Per campaign × channel and history bucket (bucket number mod HISTORY_BUCKETS): its latest impression. */
    private final String[][] historyRequestIds;

    private final long[][] historyTs;
    /** Per campaign × channel, the latest impression's request id (null: none yet). */
    private final String[] latestRequestId;
    /** Per campaign × channel, request ids clicks already carry whose impression is still to come. */
    private final List<ArrayDeque<String>> promisedRequestIds;

    private final int quietPartition;
    private final long quietFromTs;
    private final long quietToTs;
    private final double delayMu;
    private final double delaySigma;
    private final PriorityQueue<GeneratedRecord> inFlight =
            new PriorityQueue<>((a, b) -> Long.compare(a.arrivalTs(), b.arrivalTs()));

    private final long startTs;
    private final long mainEndTs;
    private final long tailEndTs;
    private long remainingValid;
    private long remainingInvalid;
    private long remainingTail;
    private long clock;
    private long nextId;

    /**
     * @throws IllegalArgumentException when the declared attributes refuse what the generator sends (see
     *     {@link GeneratedAttributes})
     */
    public TrafficGenerator(TrafficProfile profile, TrafficTally tally) {
        this.profile = profile;
        this.tally = tally;
        this.validator = new EventValidator(profile.validation(), profile.attributes());
        this.attributes = new GeneratedAttributes(profile.attributes(), profile.seed());
        this.invalidSamples = java.util.Arrays.stream(InvalidSample.values())
                .filter(sample -> sample.breaks(attributes))
                .toArray(InvalidSample[]::new);
        this.random = new SplittableRandom(profile.seed());
        this.startTs = profile.start().toEpochMilli();
        this.mainEndTs = profile.mainEnd().toEpochMilli();
        this.tailEndTs = profile.tailEnd().toEpochMilli();
        this.clock = startTs;
        this.remainingValid = profile.events();
        this.remainingInvalid = Math.round(profile.events() * profile.invalidShare());
        // The tail is thin (a tenth of the main density) and exists only to move watermarks on.
        double perMs = (double) profile.events() / profile.span().toMillis();
        this.remainingTail = Math.round(perMs * profile.tail().toMillis() / 10.0);

        int n = profile.campaigns();
        campaignIds = new String[n];
        campaignCumulative = new double[n];
        campaignPartition = new int[n];
        cpmMicros = new long[n];
        cpcMicros = new long[n];
        cpaMicros = new long[n];
        historyRequestIds = new String[n * CHANNELS.length][HISTORY_BUCKETS];
        historyTs = new long[n * CHANNELS.length][HISTORY_BUCKETS];
        latestRequestId = new String[n * CHANNELS.length];
        promisedRequestIds = new ArrayList<>(n * CHANNELS.length);
        for (int k = 0; k < n * CHANNELS.length; k++) promisedRequestIds.add(new ArrayDeque<>());
        double total = 0;
        for (int i = 0; i < n; i++) {
            campaignIds[i] = String.format("cmp-%04d", i + 1);
            total += 1.0 / Math.pow(i + 1, 1.1); // Zipf-like: a few campaigns carry most traffic
            campaignCumulative[i] = total;
            campaignPartition[i] = partitionOf(campaignIds[i], profile.partitions());
            cpmMicros[i] = Math.round(logNormal(Math.log(3_500), 0.5)); // per impression: ~$3.50 CPM
            cpcMicros[i] = Math.round(logNormal(Math.log(600_000), 0.6)); // per click: ~$0.60 CPC
            cpaMicros[i] = random.nextDouble() < 0.3 ? Math.round(logNormal(Math.log(12_000_000), 0.4)) : 0;
        }
        for (int i = 0; i < n; i++) campaignCumulative[i] /= total;

        boolean quiet = profile.quietTo() > profile.quietFrom() && profile.partitions() > 1;
        quietPartition = quiet ? campaignPartition[0] == 0 ? 1 : 0 : -1; // never the biggest campaign's partition
        quietFromTs = startTs + Math.round(profile.span().toMillis() * profile.quietFrom());
        quietToTs = startTs + Math.round(profile.span().toMillis() * profile.quietTo());

        delayMu = Math.log(profile.delayMedian().toMillis());
        delaySigma = Math.log((double) profile.delayP99().toMillis()
                        / profile.delayMedian().toMillis())
                / Z99;
        tally.describe(profile, quietPartition, quietFromTs, quietToTs);
    }

    /** Kafka's default partitioner for a keyed record, so the generator knows which partition each campaign uses. */
    public static int partitionOf(String campaignId, int partitions) {
        return Utils.toPositive(Utils.murmur2(campaignId.getBytes(StandardCharsets.UTF_8))) % partitions;
    }

    @Override
    public boolean hasNext() {
        fill();
        return !inFlight.isEmpty();
    }

    @Override
    public GeneratedRecord next() {
        if (!hasNext()) throw new NoSuchElementException();
        return inFlight.poll();
    }

    public void forEachRemaining(Consumer<? super GeneratedRecord> action) {
        while (hasNext()) action.accept(next());
    }

    /** Draws until the head of the queue can no longer be overtaken by a later draw. */
    private void fill() {
        while (moreToDraw() && (inFlight.isEmpty() || inFlight.peek().arrivalTs() >= clock)) {
            drawOne();
        }
    }

    private boolean moreToDraw() {
        return remainingValid + remainingInvalid + remainingTail > 0;
    }

    private void drawOne() {
        long mainItems = remainingValid + remainingInvalid;
        if (mainItems > 0) {
            long meanGap = Math.max(1, (mainEndTs - clock) / (mainItems + 1));
            clock = Math.min(mainEndTs - 1, clock + Math.round(exponential(meanGap)));
            if (random.nextDouble() * mainItems < remainingInvalid) {
                remainingInvalid--;
                emitInvalid(clock);
            } else {
                remainingValid--;
                emitValid(clock, true);
            }
        } else {
            long meanGap = Math.max(1, (tailEndTs - clock) / (remainingTail + 1));
            clock = Math.max(clock, mainEndTs);
            clock = Math.min(tailEndTs - 1, clock + Math.round(exponential(meanGap)));
            remainingTail--;
            emitValid(clock, false);
        }
    }

    private void emitValid(long eventTs, boolean main) {
        int c = pickCampaign(eventTs);
        String campaign = campaignIds[c];
        int ch = pick(CHANNEL_WEIGHTS);
        String channel = CHANNELS[ch];
        double u = random.nextDouble();
        EventType type = u < IMPRESSION_SHARE
                ? EventType.IMPRESSION
                : u < IMPRESSION_SHARE + CLICK_SHARE ? EventType.CLICK : EventType.CONVERSION;
        long cost = switch (type) {
            case IMPRESSION -> jitter(cpmMicros[c]);
            case CLICK -> jitter(cpcMicros[c]);
            case CONVERSION -> cpaMicros[c];
        };
        cost = Math.min(cost, profile.validation().maxCostMicros());
        String eventId = "ev-" + Long.toString(profile.seed(), 36) + "-" + nextId++;
        int key = c * CHANNELS.length + ch;
        String requestId = type == EventType.IMPRESSION
                ? impressionRequestId(key, eventTs)
                : followedRequestId(key, eventTs, type);
        AdEvent e = new AdEvent(eventId, type, eventTs, campaign, channel, cost, requestId, null, 0, 0, 0);
        e.attributesJson = attributes.draw(c, channel).toString(); // sent after the contract fields
        boolean tooLate = main && random.nextDouble() < profile.tooLateShare();
        long delay = tooLate
                ? profile.tooLateDelay().toMillis()
                        + (long) (random.nextDouble() * profile.tooLateDelay().toMillis())
                : Math.min(
                        Math.round(logNormal(delayMu, delaySigma)),
                        profile.tooLateDelay().toMillis() - 1);
        int partition = campaignPartition[c];
        long arrival = deliverable(partition, eventTs + delay);
        byte[] recordKey = campaign.getBytes(StandardCharsets.UTF_8);
        byte[] value = EventJson.toJson(e).getBytes(StandardCharsets.UTF_8);
        check(value, arrival, null);
        inFlight.add(
                new GeneratedRecord(partition, arrival, recordKey, value, GeneratedRecord.Kind.VALID, null, eventTs));
        tally.addValid(main, tooLate);
        if (main && random.nextDouble() < profile.duplicateShare()) {
            long again = deliverable(partition, arrival + 100 + (long) (random.nextDouble() * 20_000));
            inFlight.add(new GeneratedRecord(
                    partition, again, recordKey, value, GeneratedRecord.Kind.DUPLICATE, null, eventTs));
            tally.addDuplicate();
        }
    }

    /**
     * The request id of a new impression: one a click already carries (its clock ran ahead), else now and then the
     * previous impression's (logged twice), else a new one. Noted as a candidate for later clicks and conversions.
     */
    private String impressionRequestId(int key, long eventTs) {
        String requestId = promisedRequestIds.get(key).poll();
        if (requestId == null) {
            requestId = latestRequestId[key] != null && random.nextDouble() < RELOGGED_IMPRESSION_SHARE
                    ? latestRequestId[key]
                    : newRequestId();
        }
        int slot = (int) Math.floorMod(Math.floorDiv(eventTs, HISTORY_BUCKET_MS), (long) HISTORY_BUCKETS);
        historyRequestIds[key][slot] = requestId;
        historyTs[key][slot] = eventTs;
        latestRequestId[key] = requestId;
        return requestId;
    }

    /**
     * The request id a click or conversion at {@code eventTs} carries: mostly that of the impression remembered in
     * the bucket a heavy-tailed delay back (the latest of that bucket), else the first remembered after it; sometimes
     * none, an unknown one, or one the next impression of its campaign and channel will have (later in event time).
     */
    private String followedRequestId(int key, long eventTs, EventType type) {
        double u = random.nextDouble();
        if (u < NO_REQUEST_ID_SHARE) return null;
        if (u < NO_REQUEST_ID_SHARE + UNKNOWN_REQUEST_ID_SHARE) return newRequestId();
        if (u < NO_REQUEST_ID_SHARE + UNKNOWN_REQUEST_ID_SHARE + IMPRESSION_LATER_SHARE
                || latestRequestId[key] == null) {
            String promised = newRequestId();
            promisedRequestIds.get(key).add(promised);
            return promised;
        }
        long median = type == EventType.CLICK ? CLICK_DELAY_MEDIAN_MS : CONVERSION_DELAY_MEDIAN_MS;
        long p99 = type == EventType.CLICK ? CLICK_DELAY_P99_MS : CONVERSION_DELAY_P99_MS;
        long target = eventTs - Math.round(logNormal(Math.log(median), Math.log((double) p99 / median) / Z99));
        long bucket =
                Math.floorDiv(Math.max(target, eventTs - (HISTORY_BUCKETS - 1) * HISTORY_BUCKET_MS), HISTORY_BUCKET_MS);
        long nowBucket = Math.floorDiv(eventTs, HISTORY_BUCKET_MS);
        // The target's bucket, else the first bucket after it that has an impression (latestRequestId at worst).
        for (long b = bucket; b <= nowBucket; b++) {
            int slot = (int) Math.floorMod(b, (long) HISTORY_BUCKETS);
            String id = historyRequestIds[key][slot];
            if (id != null && Math.floorDiv(historyTs[key][slot], HISTORY_BUCKET_MS) == b) return id; // not a stale lap
        }
        return latestRequestId[key];
    }

    private String newRequestId() {
        return String.format("req-%016x", random.nextLong());
    }

    /** Every invalid class of CONTRACT §1, in turn, so each shows up in the dead-letter topic. */
    private void emitInvalid(long at) {
        InvalidSample s = invalidSamples[(int) (nextId++ % invalidSamples.length)];
        int c = pickCampaign(at);
        String campaign = campaignIds[c];
        byte[] value = s.value(campaign, at, profile, attributes.valid(c, "web"));
        int partition = partitionAvoidingQuiet(at);
        check(value, at, s.reason);
        byte[] key = s.keyed ? campaign.getBytes(StandardCharsets.UTF_8) : null;
        inFlight.add(new GeneratedRecord(partition, at, key, value, GeneratedRecord.Kind.INVALID, s.reason, 0));
        tally.addInvalid(s.reason);
    }

    private void check(byte[] value, long recordTs, InvalidReason expected) {
        ValidationResult r = validator.validate(value, recordTs, "generator", 0, 0);
        InvalidReason got = r.isValid() ? null : r.reason();
        if (got != expected) {
            throw new IllegalStateException(
                    "generator bug: record meant to be " + (expected == null ? "valid" : expected) + " validates as "
                            + r + ": " + new String(value == null ? new byte[0] : value, StandardCharsets.UTF_8));
        }
    }

    private int pickCampaign(long eventTs) {
        boolean quiet = quietPartition >= 0 && eventTs >= quietFromTs && eventTs < quietToTs;
        for (int attempt = 0; attempt < 1000; attempt++) {
            double u = random.nextDouble();
            int lo = 0;
            int hi = campaignCumulative.length - 1;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (campaignCumulative[mid] < u) lo = mid + 1;
                else hi = mid;
            }
            if (!quiet || campaignPartition[lo] != quietPartition) return lo;
        }
        throw new IllegalStateException("every campaign maps to the quiet partition " + quietPartition
                + ": use more campaigns or disable the quiet phase");
    }

    /**
     * The quiet partition delivers nothing during its quiet phase: records that would arrive then are held
     * back and arrive together when it resumes, like a stalled broker or a buffering SDK catching up.
     */
    private long deliverable(int partition, long arrival) {
        boolean held = partition == quietPartition && arrival >= quietFromTs && arrival < quietToTs;
        return held ? quietToTs : arrival;
    }

    private int partitionAvoidingQuiet(long at) {
        int p = random.nextInt(profile.partitions());
        boolean quiet = quietPartition >= 0 && at >= quietFromTs && at < quietToTs;
        return quiet && p == quietPartition ? (p + 1) % profile.partitions() : p;
    }

    private int pick(double[] weights) {
        double u = random.nextDouble();
        for (int i = 0; i < weights.length; i++) {
            u -= weights[i];
            if (u < 0) return i;
        }
        return weights.length - 1;
    }

    private long jitter(long base) {
        return Math.max(0, Math.round(base * (0.8 + 0.4 * random.nextDouble())));
    }

    private double exponential(double mean) {
        return -mean * Math.log(1 - random.nextDouble());
    }

    private double logNormal(double mu, double sigma) {
        return Math.exp(mu + sigma * gaussian());
    }

    private double gaussian() {
        double u1 = 1 - random.nextDouble();
        double u2 = random.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }

    /** Drains the generator into a list; for tests and small runs. */
    public static List<GeneratedRecord> all(TrafficProfile profile, TrafficTally tally) {
        List<GeneratedRecord> out = new ArrayList<>();
        new TrafficGenerator(profile, tally).forEachRemaining(out::add);
        return out;
    }
}
