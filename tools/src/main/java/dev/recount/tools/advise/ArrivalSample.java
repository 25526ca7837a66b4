package dev.recount.tools.advise;

import dev.recount.core.event.EventValidator;
import dev.recount.core.event.ValidationResult;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The valid events of a stretch of the input topic as the watermark sees them: per Kafka partition, in offset
 * (arrival) order, each event's record timestamp (arrival time) and event time, for the replay. Nothing else is
 * kept: with the seen event_ids ({@link EventIdSet}) about 50 bytes an event at most, so 50 million events fit in
 * 2.5 GB.
 *
 * <p>Built with the stream job's own rules: records are judged by core's {@link EventValidator} (invalid ones
 * never reach a watermark, so they are skipped here too) and an {@code event_id} seen before is a duplicate
 * the job drops before its windows, so it is skipped as well.
 */
final class ArrivalSample {
    /**
     * Bytes an event may cost at the peak: two timestamps (16) in buffers up to twice their size while they grow,
     * plus the copy {@link Builder#build} makes (48 in all), and its id hash at load factor up to 1/2, while the
     * table doubles (48). What {@code advise}'s default record limit divides the heap by.
     */
    static final long PEAK_BYTES_PER_EVENT = 100;

    private final int[] partitions;
    private final long[][] recordTs;
    private final long[][] eventTs;
    private final long invalid;
    private final long duplicates;

    private ArrivalSample(int[] partitions, long[][] recordTs, long[][] eventTs, long invalid, long duplicates) {
        this.partitions = partitions;
        this.recordTs = recordTs;
        this.eventTs = eventTs;
        this.invalid = invalid;
        this.duplicates = duplicates;
    }

    /** Number of partitions with at least one valid event. */
    int partitionCount() {
        return partitions.length;
    }

    /** Kafka partition number of the i-th partition (ascending). */
    int partition(int i) {
        return partitions[i];
    }

    /** Arrival times (record timestamps) of the i-th partition's events, in offset order. Do not modify. */
    long[] recordTs(int i) {
        return recordTs[i];
    }

    /** Event times of the i-th partition's events, in offset order. Do not modify. */
    long[] eventTs(int i) {
        return eventTs[i];
    }

    long events() {
        long n = 0;
        for (long[] r : recordTs) n += r.length;
        return n;
    }

    long invalid() {
        return invalid;
    }

    long duplicates() {
        return duplicates;
    }

    /** The earliest arrival in the sample; where a replay starts. */
    long firstArrival() {
        long first = Long.MAX_VALUE;
        for (long[] r : recordTs) {
            for (long t : r) first = Math.min(first, t);
        }
        if (first == Long.MAX_VALUE) throw new IllegalStateException("empty sample");
        return first;
    }

    enum Verdict {
        VALID,
        INVALID,
        DUPLICATE
    }

    /** Collects records one by one, in the order they were read from each partition. */
    static final class Builder {
        private final EventValidator validator;
        private final EventIdSet seenIds = new EventIdSet();
        private final Map<Integer, LongBuffer> recordTs = new TreeMap<>();
        private final Map<Integer, LongBuffer> eventTs = new TreeMap<>();
        private long invalid;
        private long duplicates;

        /** @param validator null to accept events added with {@link #addValid} only (tests) */
        Builder(EventValidator validator) {
            this.validator = validator;
        }

        /** Judges one Kafka record as the stream job does and keeps it if it is a valid, first-seen event. */
        Verdict offer(String topic, int partition, long offset, long recordTimestamp, byte[] value) {
            Objects.requireNonNull(validator, "this builder has no validator");
            ValidationResult r = validator.validate(value, recordTimestamp, topic, partition, offset);
            if (!r.isValid()) {
                invalid++;
                return Verdict.INVALID;
            }
            if (!seenIds.add(r.event().eventId)) {
                duplicates++;
                return Verdict.DUPLICATE;
            }
            addValid(partition, recordTimestamp, r.event().eventTs);
            return Verdict.VALID;
        }

        /** Adds an event known to be valid and unique. */
        Builder addValid(int partition, long recordTimestamp, long eventTimestamp) {
            recordTs.computeIfAbsent(partition, p -> new LongBuffer()).add(recordTimestamp);
            eventTs.computeIfAbsent(partition, p -> new LongBuffer()).add(eventTimestamp);
            return this;
        }

        long valid() {
            long n = 0;
            for (LongBuffer b : recordTs.values()) n += b.size;
            return n;
        }

        ArrivalSample build() {
            int n = recordTs.size();
            int[] parts = new int[n];
            long[][] rec = new long[n][];
            long[][] ev = new long[n][];
            int i = 0;
            for (Map.Entry<Integer, LongBuffer> e : recordTs.entrySet()) {
                parts[i] = e.getKey();
                rec[i] = e.getValue().toArray();
                ev[i] = eventTs.get(e.getKey()).toArray();
                i++;
            }
            return new ArrivalSample(parts, rec, ev, invalid, duplicates);
        }
    }

    /** A growable long[]: a boxed List of millions of timestamps would cost ten times the memory. */
    static final class LongBuffer {
        private long[] values = new long[1024];
        private int size;

        void add(long v) {
            if (size == values.length) values = Arrays.copyOf(values, values.length * 2);
            values[size++] = v;
        }

        long[] toArray() {
            return Arrays.copyOf(values, size);
        }
    }
}
