package dev.recount.stream.testutils;

import java.util.HashMap;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.util.InterceptingOperatorMetricGroup;

/**
 * An operator's metric group that keeps what is registered in it and in its key/value subgroups (a metric set's
 * {@code metric_set=<name>}), so a harness test can read a set's counters as a reporter would see them.
 */
public final class CapturingMetricGroup extends InterceptingOperatorMetricGroup {
    private final Map<String, CapturingMetricGroup> subgroups = new HashMap<>();

    @Override
    public MetricGroup addGroup(String key, String value) {
        return subgroups.computeIfAbsent(key + "=" + value, k -> new CapturingMetricGroup());
    }

    /** The counter {@code name} of this group. */
    public long count(String name) {
        return ((Counter) get(name)).getCount();
    }

    /** The counter {@code name} of the subgroup {@code key=value}; 0 if the subgroup has none. */
    public long count(String key, String value, String name) {
        CapturingMetricGroup group = subgroups.get(key + "=" + value);
        return group == null || group.get(name) == null ? 0 : group.count(name);
    }
}
