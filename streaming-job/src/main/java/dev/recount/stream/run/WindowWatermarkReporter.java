package dev.recount.stream.run;

import java.util.Properties;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A Flink metric reporter that only hands the window operator's watermark gauges to their
 * {@link WindowWatermarkGauges} in the same JVM. It reports nothing anywhere and is never scheduled: it is called
 * when a metric is registered or removed, nothing more. Configured by {@link WindowWatermarkGauges#reportingTo} on the
 * local MiniCluster only; found by Flink's service loader (META-INF/services).
 */
public final class WindowWatermarkReporter implements MetricReporter {
    /** Null when its gauges are gone (a stale configuration): then it ignores everything. */
    private final WindowWatermarkGauges gauges;

    WindowWatermarkReporter(WindowWatermarkGauges gauges) {
        this.gauges = gauges;
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        if (gauges != null) gauges.added(metric, metricName, group);
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        if (gauges != null) gauges.removed(metric, metricName, group);
    }

    /** What Flink instantiates ({@code metrics.reporter.<name>.factory.class}). */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            String id = properties.getProperty(WindowWatermarkGauges.GAUGES_ID.key());
            return new WindowWatermarkReporter(WindowWatermarkGauges.find(id).orElse(null));
        }
    }
}
