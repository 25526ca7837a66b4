package dev.recount.deploy.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.cli.Pushgateway;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names recount's PromQL (alert rules, Grafana dashboards) may read, and a reader of the names an expression
 * reads. A name is known when the streaming job registers it ({@code flink_taskmanager_job_task_operator_<groups>_<name>},
 * as Flink's Prometheus reporter names it), when it is one of the JobManager's job metrics that docs/operations.md
 * documents ({@code flink_jobmanager_job_<name>}), when it is one of the TaskManager's JVM metrics that it documents
 * ({@code flink_taskmanager_Status_JVM_<name>}), when a scheduled command pushes it to the Pushgateway ({@code
 * recount_reconcile_*} from `reconcile pending`, reconciler's PendingMetrics; {@code recount_correct_*} from `correct`,
 * operations' CorrectMetrics; {@code recount_backfill_nightly_*} and {@code recount_lake_compact_*} from `backfill
 * nightly` and `backfill compact`, batch-backfill's ScheduledRunMetrics), or when the caller names it as coming from
 * elsewhere (kube-state-metrics).
 */
final class KnownMetrics {
    static final String TASK_PREFIX = "flink_taskmanager_job_task_operator_";
    static final String JOB_MANAGER_PREFIX = "flink_jobmanager_job_";
    /** The prefixes of the metrics recount's scheduled commands push (reconcile pending, correct, backfill). */
    static final Set<String> PUSHED_PREFIXES =
            Set.of("recount_reconcile_", "recount_correct_", "recount_backfill_nightly_", "recount_lake_compact_");

    /** What {@link Pushgateway#outcome} names after a job. */
    static final List<String> OUTCOME_SUFFIXES =
            List.of(Pushgateway.LAST_RUN, Pushgateway.LAST_EXIT_CODE, Pushgateway.LAST_SUCCESS);

    static final String TASK_MANAGER_JVM_PREFIX = "flink_taskmanager_Status_JVM_";

    /**
     * Flink's own per-job metrics on the JobManager that recount reads: they survive the restarts of the job's tasks.
     * Flink registers them itself, so they cannot be looked up in recount's sources; docs/operations.md lists them.
     */
    static final Set<String> JOB_MANAGER_METRICS = Set.of(
            "numRestarts",
            "numberOfCompletedCheckpoints",
            "numberOfFailedCheckpoints",
            "lastCheckpointDuration",
            "uptime");

    /** Flink's JVM metrics of each TaskManager that recount reads (docs/operations.md lists them, as the above). */
    static final Set<String> TASK_MANAGER_JVM_METRICS = Set.of("Memory_Heap_Used", "Memory_Heap_Max");

    private static final Set<String> KEYWORDS = Set.of(
            "and",
            "or",
            "unless",
            "bool",
            "offset",
            "by",
            "without",
            "on",
            "ignoring",
            "group_left",
            "group_right",
            "inf",
            "nan",
            "atan2");
    private static final Pattern SELECTOR = Pattern.compile("\\{([^}]*)}");
    private static final Pattern NAME_MATCHER = Pattern.compile("__name__\\s*(=~|=)\\s*\"([^\"]*)\"");
    /** {@code prefix(a|b|c)suffix}: the one form of {@code __name__=~} whose names can be listed. */
    private static final Pattern ALTERNATION = Pattern.compile("([\\w:]*)\\(([\\w:|]+)\\)([\\w:]*)");

    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`");
    private static final Pattern RANGE = Pattern.compile("\\[[^]]*]");
    private static final Pattern GROUPING =
            Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    /** An identifier that does not start inside a number, a duration or a Grafana variable, and is no function call. */
    private static final Pattern IDENTIFIER = Pattern.compile("(?<![\\w$.:])([a-zA-Z_:][\\w:]*+)(?!\\s*\\()");

    private final String jobSources;
    private final String pushedByCommands;
    private final Set<String> fromElsewhere;

    KnownMetrics(String jobSources, String pushedByCommands, Set<String> fromElsewhere) {
        this.jobSources = jobSources;
        this.pushedByCommands = pushedByCommands;
        this.fromElsewhere = Set.copyOf(fromElsewhere);
    }

    /** The metrics of this repository: the streaming job's sources and the pushed metrics as they are now. */
    static KnownMetrics ofRepository(Set<String> fromElsewhere) throws IOException {
        return new KnownMetrics(
                ManifestsTest.moduleSources("streaming-job"),
                Files.readString(ManifestsTest.ROOT.resolve(
                                "reconciler/src/main/java/dev/recount/reconcile/PendingMetrics.java"))
                        + Files.readString(ManifestsTest.ROOT.resolve(
                                "operations/src/main/java/dev/recount/ops/CorrectMetrics.java"))
                        + Files.readString(ManifestsTest.ROOT.resolve(
                                "batch-backfill/src/main/java/dev/recount/batch/ScheduledRunMetrics.java")),
                fromElsewhere);
    }

    /** Fails unless every metric {@code expr} reads is known; returns them. */
    Set<String> check(String expr, String where) {
        Set<String> names = metricNames(expr);
        assertThat(names).as("%s reads some metric: %s", where, expr).isNotEmpty();
        for (String name : names) checkKnown(name, where);
        return names;
    }

    void checkKnown(String name, String where) {
        if (name.startsWith(TASK_PREFIX)) {
            checkRegisteredByTheJob(name.substring(TASK_PREFIX.length()), jobSources, where);
        } else if (name.startsWith(JOB_MANAGER_PREFIX)) {
            assertThat(JOB_MANAGER_METRICS)
                    .as("%s: %s is one of the JobManager's job metrics recount reads", where, name)
                    .contains(name.substring(JOB_MANAGER_PREFIX.length()));
        } else if (name.startsWith(TASK_MANAGER_JVM_PREFIX)) {
            assertThat(TASK_MANAGER_JVM_METRICS)
                    .as("%s: %s is one of the TaskManager's JVM metrics recount reads", where, name)
                    .contains(name.substring(TASK_MANAGER_JVM_PREFIX.length()));
        } else if (PUSHED_PREFIXES.stream().anyMatch(name::startsWith)) {
            // PendingMetrics, CorrectMetrics and ScheduledRunMetrics push a run's outcome with Pushgateway.outcome,
            // named after their job (a string literal there), and write each gauge of their own by its name.
            String outcomeOf = OUTCOME_SUFFIXES.stream()
                    .filter(name::endsWith)
                    .map(suffix -> name.substring(0, name.length() - suffix.length()))
                    .findFirst()
                    .orElse(null);
            boolean anOutcome = outcomeOf != null
                    && pushedByCommands.contains("Pushgateway.outcome(")
                    && pushedByCommands.contains("\"" + outcomeOf + "\"");
            if (!anOutcome) {
                assertThat(pushedByCommands)
                        .as(
                                "%s: %s is pushed by reconcile pending, correct, backfill nightly or backfill compact",
                                where, name)
                        .contains("\"" + name + "\"");
            }
        } else {
            assertThat(fromElsewhere)
                    .as("%s: %s is no metric recount knows", where, name)
                    .contains(name);
        }
    }

    static void checkRegisteredByTheJob(String suffix, String jobSources, String where) {
        // <group>_..._<name>: a metric name registered with counter(..)/gauge(..), under groups added with
        // addGroup(..) (a group's key may hold '_' itself: metric_set).
        int last = suffix.lastIndexOf('_');
        String name = suffix.substring(last + 1);
        assertThat(jobSources)
                .as("%s: metric %s is registered by the streaming job", where, name)
                .contains("\"" + name + "\"");
        if (last < 0) return;
        String groups = suffix.substring(0, last);
        Set<String> added = groupsAdded(jobSources);
        assertThat(splitsInto(groups, added))
                .as("%s: metric groups %s are added by the streaming job (it adds %s)", where, groups, added)
                .isTrue();
    }

    /** The group names the sources pass to addGroup: as a literal, or as a constant whose literal they define. */
    static Set<String> groupsAdded(String sources) {
        Set<String> groups = new TreeSet<>();
        Matcher literal = Pattern.compile("addGroup\\(\"([^\"]+)\"").matcher(sources);
        while (literal.find()) groups.add(literal.group(1));
        Matcher constant = Pattern.compile("addGroup\\(([A-Z_][A-Z0-9_]*)\\s*,").matcher(sources);
        while (constant.find()) {
            Matcher value = Pattern.compile("\\b" + constant.group(1) + "\\s*=\\s*\"([^\"]+)\"")
                    .matcher(sources);
            if (value.find()) groups.add(value.group(1));
        }
        return groups;
    }

    /** Whether {@code groups} is one or more of {@code added} joined by '_'. */
    private static boolean splitsInto(String groups, Set<String> added) {
        if (added.contains(groups)) return true;
        for (String g : added) {
            if (groups.startsWith(g + "_") && splitsInto(groups.substring(g.length() + 1), added)) return true;
        }
        return false;
    }

    /**
     * The metric names a PromQL expression reads: the bare names of its vector selectors and the names a
     * {@code __name__} matcher selects. Label names, functions, keywords, durations and Grafana's {@code $variables}
     * are not metrics. A {@code __name__=~} regex other than {@code prefix(a|b)suffix} fails: nobody could check it.
     */
    static Set<String> metricNames(String expr) {
        Set<String> out = new TreeSet<>();
        StringBuilder rest = new StringBuilder();
        Matcher selector = SELECTOR.matcher(expr);
        while (selector.find()) {
            Matcher name = NAME_MATCHER.matcher(selector.group(1));
            if (name.find()) out.addAll(namesMatchedBy(name.group(1), name.group(2), expr));
            selector.appendReplacement(rest, " ");
        }
        selector.appendTail(rest);
        String s = STRING.matcher(rest).replaceAll(" ");
        s = RANGE.matcher(s).replaceAll(" ");
        s = GROUPING.matcher(s).replaceAll(" ");
        Matcher id = IDENTIFIER.matcher(s);
        while (id.find()) {
            if (!KEYWORDS.contains(id.group(1).toLowerCase(Locale.ROOT))) out.add(id.group(1));
        }
        return out;
    }

    private static Set<String> namesMatchedBy(String op, String value, String expr) {
        Set<String> out = new TreeSet<>();
        if (op.equals("=")) {
            out.add(value);
            return out;
        }
        if (value.matches("[\\w:]+")) {
            out.add(value);
            return out;
        }
        Matcher alt = ALTERNATION.matcher(value);
        if (!alt.matches())
            throw new AssertionError("cannot list the metrics __name__=~\"" + value + "\" reads in " + expr);
        for (String middle : alt.group(2).split("\\|")) out.add(alt.group(1) + middle + alt.group(3));
        return out;
    }
}
