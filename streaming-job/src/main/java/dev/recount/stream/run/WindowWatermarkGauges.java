package dev.recount.stream.run;

import java.lang.ref.WeakReference;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;

/**
 * The window operator's input watermark as its subtasks' own {@code currentInputWatermark} gauges hold it, read in
 * this JVM (for {@link WindowCloseCheckpoints} on the local MiniCluster).
 *
 * <p>Through the REST API the same figure comes from a copy of all metrics that the Web UI refreshes every
 * {@code metrics.fetcher.update-interval}: to see it fresh the job had to poll the REST API and have every metric of
 * every task serialized every 200 ms, about 1.2–1.9 s of CPU per 20 s run on the JobManager's threads
 * (docs/benchmarks.md §1c). A metric reporter ({@link WindowWatermarkReporter}) hands Flink's gauges to this object
 * instead, where reading one is reading a field.
 *
 * <p>Flink creates reporters from configuration through a service loader, so the reporter finds the object it feeds
 * by an id in its configuration ({@link #reportingTo}); each local environment has its own, so two jobs in one JVM (as
 * in tests) never see each other's gauges. Gauges are also kept per job id.
 */
public final class WindowWatermarkGauges {
    /** The reporter's name in Flink's configuration ({@code metrics.reporter.<name>.*}). */
    static final String REPORTER = "recount-window-watermark";
    /** Which {@link WindowWatermarkGauges} a reporter feeds: {@link #id()}. */
    static final ConfigOption<String> GAUGES_ID =
            ConfigOptions.key("gauges-id").stringType().noDefaultValue();

    static final String WATERMARK_GAUGE = "currentInputWatermark";
    private static final String OPERATOR_NAME = "<operator_name>";
    private static final String JOB_ID = "<job_id>";

    /**
     * Weakly held: an instance lives as long as its environment (and the reporter of that environment's
     * MiniCluster); a finished test's environment must not stay reachable from here.
     */
    private static final Map<String, WeakReference<WindowWatermarkGauges>> BY_ID = new ConcurrentHashMap<>();

    private final String id = UUID.randomUUID().toString();
    private final String operatorName;
    /** The window operator's gauges, one per running subtask, with the job each belongs to. */
    private final Set<JobGauge> gauges = ConcurrentHashMap.newKeySet();

    private record JobGauge(String jobId, Gauge<?> gauge) {}

    private WindowWatermarkGauges(String operatorName) {
        this.operatorName = Objects.requireNonNull(operatorName, "operatorName");
    }

    /** Gauges of the operator named {@code operatorName}, findable by their reporter from now on. */
    public static WindowWatermarkGauges create(String operatorName) {
        WindowWatermarkGauges gauges = new WindowWatermarkGauges(operatorName);
        BY_ID.values().removeIf(ref -> ref.get() == null);
        BY_ID.put(gauges.id, new WeakReference<>(gauges));
        return gauges;
    }

    /** The instance with this id, if it is still alive. */
    static Optional<WindowWatermarkGauges> find(String id) {
        WeakReference<WindowWatermarkGauges> ref = id == null ? null : BY_ID.get(id);
        return Optional.ofNullable(ref == null ? null : ref.get());
    }

    String id() {
        return id;
    }

    /**
     * {@code conf} plus a reporter that feeds this object. If {@code metrics.reporters} limits which reporters start,
     * this one is added to the list.
     */
    Configuration reportingTo(Configuration conf) {
        Configuration c = new Configuration(conf);
        Configuration reporter = MetricOptions.forReporter(c, REPORTER);
        reporter.set(MetricOptions.REPORTER_FACTORY_CLASS, WindowWatermarkReporter.Factory.class.getName());
        reporter.set(GAUGES_ID, id);
        // Only the gauges it looks for reach it (the registry filters before it calls a reporter).
        reporter.set(MetricOptions.REPORTER_INCLUDES, java.util.List.of("*:" + WATERMARK_GAUGE + ":gauge"));
        c.getOptional(MetricOptions.REPORTERS_LIST)
                .filter(list -> !list.isBlank())
                .ifPresent(list -> c.set(MetricOptions.REPORTERS_LIST, list + "," + REPORTER));
        return c;
    }

    /** A metric was registered (the reporter's call): kept if it is the window operator's input watermark. */
    void added(Metric metric, String name, MetricGroup group) {
        JobGauge g = windowWatermark(metric, name, group);
        if (g != null) gauges.add(g);
    }

    /** A metric was removed (its task ended, failed or was cancelled). */
    void removed(Metric metric, String name, MetricGroup group) {
        JobGauge g = windowWatermark(metric, name, group);
        if (g != null) gauges.remove(g);
    }

    private JobGauge windowWatermark(Metric metric, String name, MetricGroup group) {
        if (!WATERMARK_GAUGE.equals(name) || !(metric instanceof Gauge<?> gauge)) return null;
        Map<String, String> variables = group.getAllVariables();
        if (!operatorName.equals(variables.get(OPERATOR_NAME))) return null;
        String job = variables.get(JOB_ID);
        return job == null ? null : new JobGauge(job, gauge);
    }

    /**
     * The window operator's input watermark in {@code job}: the minimum over its running subtasks, empty while none has
     * registered one. Long.MIN_VALUE while a subtask has seen no watermark yet. During a restart only some subtasks may
     * be counted; WindowCloseCheckpoints then at worst asks for one checkpoint early, which is harmless.
     */
    public OptionalLong watermark(JobID job) {
        String wanted = job.toHexString();
        long min = Long.MAX_VALUE;
        boolean any = false;
        for (JobGauge g : gauges) {
            if (!g.jobId().equals(wanted)) continue;
            if (g.gauge().getValue() instanceof Long value) {
                min = Math.min(min, value);
                any = true;
            }
        }
        return any ? OptionalLong.of(min) : OptionalLong.empty();
    }
}
