package dev.recount.stream.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.junit.jupiter.api.Test;

class WindowWatermarkGaugesTest {
    private static final String WINDOW = "window-metrics";
    private static final JobID JOB = JobID.fromHexString("0123456789abcdef0123456789abcdef");
    private static final JobID OTHER_JOB = JobID.fromHexString("fedcba9876543210fedcba9876543210");
    private static final long T = 1_795_946_460_000L; // 2026-11-29T10:01:00Z

    private final WindowWatermarkGauges gauges = WindowWatermarkGauges.create(WINDOW);

    @Test
    void theMinimumOverTheWindowOperatorsSubtasksOfThatJob() {
        MetricReporter reporter = reporterFor(gauges);
        assertThat(gauges.watermark(JOB)).isEmpty();

        Gauge<Long> subtask0 = () -> T + 5_000;
        Gauge<Long> subtask1 = () -> T;
        reporter.notifyOfAddedMetric(subtask0, "currentInputWatermark", operator(WINDOW, JOB));
        reporter.notifyOfAddedMetric(subtask1, "currentInputWatermark", operator(WINDOW, JOB));
        // Not the window operator's input watermark, or another job's: ignored.
        reporter.notifyOfAddedMetric((Gauge<Long>) () -> T - 1, "currentInputWatermark", operator("dedup", JOB));
        reporter.notifyOfAddedMetric((Gauge<Long>) () -> T - 2, "currentOutputWatermark", operator(WINDOW, JOB));
        reporter.notifyOfAddedMetric((Gauge<Long>) () -> T - 3, "currentInputWatermark", operator(WINDOW, OTHER_JOB));
        reporter.notifyOfAddedMetric(new SimpleCounter(), "currentInputWatermark", operator(WINDOW, JOB));

        assertThat(gauges.watermark(JOB)).isEqualTo(OptionalLong.of(T));
        assertThat(gauges.watermark(OTHER_JOB)).isEqualTo(OptionalLong.of(T - 3));

        reporter.notifyOfRemovedMetric(subtask1, "currentInputWatermark", operator(WINDOW, JOB));
        assertThat(gauges.watermark(JOB)).as("subtask 1 ended").isEqualTo(OptionalLong.of(T + 5_000));
        reporter.notifyOfRemovedMetric(subtask0, "currentInputWatermark", operator(WINDOW, JOB));
        assertThat(gauges.watermark(JOB)).isEmpty();
    }

    @Test
    void eachEnvironmentsReporterFeedsOnlyItsOwnGauges() {
        WindowWatermarkGauges second = WindowWatermarkGauges.create(WINDOW);
        reporterFor(second).notifyOfAddedMetric((Gauge<Long>) () -> T, "currentInputWatermark", operator(WINDOW, JOB));

        assertThat(second.watermark(JOB)).isEqualTo(OptionalLong.of(T));
        assertThat(gauges.watermark(JOB)).isEmpty();
    }

    @Test
    void aReporterWhoseGaugesAreUnknownIgnoresEverything() {
        Properties properties = new Properties();
        properties.setProperty(WindowWatermarkGauges.GAUGES_ID.key(), "no-such-environment");
        MetricReporter reporter = new WindowWatermarkReporter.Factory().createMetricReporter(properties);
        reporter.notifyOfAddedMetric((Gauge<Long>) () -> T, "currentInputWatermark", operator(WINDOW, JOB));
        assertThat(gauges.watermark(JOB)).isEmpty();
    }

    @Test
    void theConfigurationStartsTheReporterEvenWhenReportersAreListed() {
        Configuration c = gauges.reportingTo(new Configuration());
        Configuration reporter = MetricOptions.forReporter(c, WindowWatermarkGauges.REPORTER);
        assertThat(reporter.get(MetricOptions.REPORTER_FACTORY_CLASS))
                .isEqualTo(WindowWatermarkReporter.Factory.class.getName());
        assertThat(reporter.get(WindowWatermarkGauges.GAUGES_ID)).isEqualTo(gauges.id());
        assertThat(reporter.get(MetricOptions.REPORTER_INCLUDES)).containsExactly("*:currentInputWatermark:gauge");
        assertThat(c.getOptional(MetricOptions.REPORTERS_LIST))
                .as("no list: every reporter starts")
                .isEmpty();

        Configuration listed = new Configuration();
        listed.set(MetricOptions.REPORTERS_LIST, "prom");
        assertThat(gauges.reportingTo(listed).get(MetricOptions.REPORTERS_LIST))
                .isEqualTo("prom," + WindowWatermarkGauges.REPORTER);
        assertThat(listed.get(MetricOptions.REPORTERS_LIST))
                .as("the given configuration is untouched")
                .isEqualTo("prom");
    }

    /** The reporter Flink would create from {@code gauges.reportingTo(...)}. */
    private static MetricReporter reporterFor(WindowWatermarkGauges gauges) {
        Configuration reporter =
                MetricOptions.forReporter(gauges.reportingTo(new Configuration()), WindowWatermarkGauges.REPORTER);
        Properties properties = new Properties();
        reporter.addAllToProperties(properties);
        return new WindowWatermarkReporter.Factory().createMetricReporter(properties);
    }

    /** An operator's metric group as Flink names its variables. */
    private static MetricGroup operator(String name, JobID job) {
        return new UnregisteredMetricsGroup() {
            @Override
            public Map<String, String> getAllVariables() {
                return Map.of("<operator_name>", name, "<job_id>", job.toHexString(), "<subtask_index>", "0");
            }
        };
    }
}
