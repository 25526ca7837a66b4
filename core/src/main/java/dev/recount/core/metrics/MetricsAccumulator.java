package dev.recount.core.metrics;

import java.io.Serializable;

/**
 * Kept only so that checkpoints of the release before metric sets restore: their de-dup operator buffered partial
 * sums as this POJO, and Flink's POJO serializer needs a class of this name with these fields to read them. The
 * streaming job converts what it reads into the default set's {@code MeasureSums} at once; nothing else uses it.
 * Layout of {@link #sums} then: impressions, clicks, conversions, spend_micros (its low 64 bits, unsigned), events;
 * {@link #spendCarry} the high word of spend. Delete it once no deployment runs the earlier release.
 */
public final class MetricsAccumulator implements Serializable {
    private static final long serialVersionUID = 1L;

    public long[] sums = new long[5];
    public long spendCarry;
}
