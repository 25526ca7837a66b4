package dev.recount.deploy.generate;

import dev.recount.core.event.AdEvent;
import dev.recount.core.event.EventJson;
import dev.recount.core.event.EventType;
import dev.recount.core.event.EventValidator;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.event.ValidationResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.apache.kafka.common.utils.Utils;

/**
 * Synthetic ad traffic in arrival order, with its own ground truth.
 *
 * <p>Events are drawn in event-time order; each becomes one record (two for a duplicate) whose arrival time
 * is event time plus a heavy-tailed delay. A priority queue re-orders them by arrival: once the generator has
 * reached event time {@code t}, no later draw can arrive before {@code t}, so everything queued before it is
 * final. Memory therefore stays at "records in flight", not the whole run.
 *
 * <p>Every event carries a request_id: an impression its own event_id, a click or conversion the id of one of the
 * last few impressions of the same campaign and channel before it in event time (none when there was none yet, as
 * for a click whose impression was never logged). A simple stand-in for attribution, deterministic per seed.
 *
 * <p>Every record is checked with core's {@link EventValidator} before it leaves: a valid event must be valid
 * and an invalid one must fail for the intended reason, so the ground truth and the stream job judge alike.
 */
public final class TrafficGenerator implements Iterator<GeneratedRecord> {
    private static final String[] CHANNELS = {"web", "ios", "android", "ctv", "email"};
    private static final double[] CHANNEL_WEIGHTS = {0.40, 0.25, 0.25, 0.07, 0.03};
    private static final double IMPRESSION_SHARE = 0.965;
    private static final double CLICK_SHARE = 0.03; // conversions: the remaining 0.5 %
    private static final double Z99 = 2.3263478740408408;
    /** Impressions remembered per campaign and channel as attribution candidates for later clicks and conversions. */
    private static final int RECENT_IMPRESSIONS = 4;

    private final TrafficProfile profile;
    private final EventValidator validator;
    private final GroundTruth truth;
    private final SplittableRandom random;
    private final String[] campaignIds;
    private final double[] campaignCumulative;
    private final int[] campaignPartition;
    private final long[] cpmMicros;
    private final long[] cpcMicros;
    private final long[] cpaMicros;
    /** Per campaign × channel, a ring of the latest impressions' ids and event times, for request_id. */
    private final String[][] recentImpressionIds;
    private final long[][] recentImpressionTs;
    private final int[] recentImpressionNext;
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

    public TrafficGenerator(TrafficProfile profile, GroundTruth truth) {
        this.profile = profile;
        this.truth = truth;
        this.validator = new EventValidator(profile.validation());
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
        recentImpressionIds = new String[n * CHANNELS.length][RECENT_IMPRESSIONS];
        recentImpressionTs = new long[n * CHANNELS.length][RECENT_IMPRESSIONS];
        recentImpressionNext = new int[n * CHANNELS.length];
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
        delaySigma = Math.log((double) profile.delayP99().toMillis() / profile.delayMedian().toMillis()) / Z99;
        truth.describe(profile, quietPartition, quietFromTs, quietToTs);
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
        EventType type = u < IMPRESSION_SHARE ? EventType.IMPRESSION
                : u < IMPRESSION_SHARE + CLICK_SHARE ? EventType.CLICK : EventType.CONVERSION;
        long cost = switch (type) {
            case IMPRESSION -> jitter(cpmMicros[c]);
            case CLICK -> jitter(cpcMicros[c]);
            case CONVERSION -> cpaMicros[c];
        };
        cost = Math.min(cost, profile.validation().maxCostMicros());
        String eventId = "ev-" + Long.toString(profile.seed(), 36) + "-" + nextId++;
        int key = c * CHANNELS.length + ch;
        String requestId = type == EventType.IMPRESSION ? remember(key, eventId, eventTs) : attribute(key, eventTs);
        AdEvent e = new AdEvent(eventId, type, eventTs, campaign, channel, cost, requestId, null, 0, 0, 0);
        boolean tooLate = main && random.nextDouble() < profile.tooLateShare();
        long delay = tooLate
                ? profile.tooLateDelay().toMillis() + (long) (random.nextDouble() * profile.tooLateDelay().toMillis())
                : Math.min(Math.round(logNormal(delayMu, delaySigma)), profile.tooLateDelay().toMillis() - 1);
        int partition = campaignPartition[c];
        long arrival = deliverable(partition, eventTs + delay);
        byte[] recordKey = campaign.getBytes(StandardCharsets.UTF_8);
        byte[] value = EventJson.toJson(e).getBytes(StandardCharsets.UTF_8);
        check(value, arrival, null);
        inFlight.add(new GeneratedRecord(partition, arrival, recordKey, value, GeneratedRecord.Kind.VALID, null, eventTs));
        truth.addValid(e, main, tooLate);
        if (main && random.nextDouble() < profile.duplicateShare()) {
            long again = deliverable(partition, arrival + 100 + (long) (random.nextDouble() * 20_000));
            inFlight.add(new GeneratedRecord(partition, again, recordKey, value, GeneratedRecord.Kind.DUPLICATE, null, eventTs));
            truth.addDuplicate();
        }
    }

    /** Notes an impression as a candidate for later clicks and conversions; returns its request_id (its own id). */
    private String remember(int key, String impressionId, long eventTs) {
        int slot = recentImpressionNext[key];
        recentImpressionIds[key][slot] = impressionId;
        recentImpressionTs[key][slot] = eventTs;
        recentImpressionNext[key] = (slot + 1) % RECENT_IMPRESSIONS;
        return impressionId;
    }

    /** One of the remembered impressions strictly before {@code eventTs}, chosen at random; null when there is none. */
    private String attribute(int key, long eventTs) {
        int candidates = 0;
        for (int i = 0; i < RECENT_IMPRESSIONS; i++) {
            if (recentImpressionIds[key][i] != null && recentImpressionTs[key][i] < eventTs) candidates++;
        }
        if (candidates == 0) return null;
        int chosen = random.nextInt(candidates);
        for (int i = 0; i < RECENT_IMPRESSIONS; i++) {
            if (recentImpressionIds[key][i] != null && recentImpressionTs[key][i] < eventTs && chosen-- == 0) {
                return recentImpressionIds[key][i];
            }
        }
        throw new AssertionError("unreachable: " + candidates + " candidates counted");
    }

    /** Every invalid class of CONTRACT §1, in turn, so each shows up in the dead-letter topic. */
    private void emitInvalid(long at) {
        InvalidSample s = InvalidSample.values()[(int) (nextId++ % InvalidSample.values().length)];
        String campaign = campaignIds[pickCampaign(at)];
        byte[] value = s.value(campaign, at, profile);
        int partition = partitionAvoidingQuiet(at);
        check(value, at, s.reason);
        byte[] key = s.keyed ? campaign.getBytes(StandardCharsets.UTF_8) : null;
        inFlight.add(new GeneratedRecord(partition, at, key, value, GeneratedRecord.Kind.INVALID, s.reason, 0));
        truth.addInvalid(s.reason);
    }

    private void check(byte[] value, long recordTs, InvalidReason expected) {
        ValidationResult r = validator.validate(value, recordTs, "generator", 0, 0);
        InvalidReason got = r.isValid() ? null : r.reason();
        if (got != expected) {
            throw new IllegalStateException("generator bug: record meant to be " + (expected == null ? "valid" : expected)
                    + " validates as " + r + ": " + new String(value == null ? new byte[0] : value, StandardCharsets.UTF_8));
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
                if (campaignCumulative[mid] < u) lo = mid + 1; else hi = mid;
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
    public static List<GeneratedRecord> all(TrafficProfile profile, GroundTruth truth) {
        List<GeneratedRecord> out = new ArrayList<>();
        new TrafficGenerator(profile, truth).forEachRemaining(out::add);
        return out;
    }
}
