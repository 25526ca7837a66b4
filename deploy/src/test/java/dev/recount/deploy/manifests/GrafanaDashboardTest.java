package dev.recount.deploy.manifests;

import static dev.recount.deploy.manifests.ManifestsTest.COMPOSE;
import static dev.recount.deploy.manifests.ManifestsTest.MONITORING;
import static dev.recount.deploy.manifests.ManifestsTest.ROOT;
import static dev.recount.deploy.manifests.ManifestsTest.composeFile;
import static dev.recount.deploy.manifests.ManifestsTest.list;
import static dev.recount.deploy.manifests.ManifestsTest.loadOne;
import static dev.recount.deploy.manifests.ManifestsTest.map;
import static dev.recount.deploy.manifests.ManifestsTest.markdownAnchors;
import static dev.recount.deploy.manifests.ManifestsTest.moduleSources;
import static dev.recount.deploy.manifests.ManifestsTest.properties;
import static dev.recount.deploy.manifests.ManifestsTest.str;
import static dev.recount.deploy.manifests.ManifestsTest.strings;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * recount's Grafana dashboards (deploy/monitoring/grafana) checked against the job and the compose file, since nothing
 * here runs Grafana: every query reads metrics that exist (the same {@link KnownMetrics} the alert rules are held to),
 * the panels the operators need are there, and docker-compose provisions the dashboards on its own Prometheus.
 * promtool parses every query in {@link PromtoolITCase}.
 */
class GrafanaDashboardTest {
    /** What a dashboard user must be able to see, by the metric that shows it. */
    static final Set<String> REQUIRED_METRICS = Set.of(
            "flink_taskmanager_job_task_operator_watermarkLagMs",
            "flink_taskmanager_job_task_operator_lateRefirings",
            "flink_taskmanager_job_task_operator_tooLateEvents",
            "flink_taskmanager_job_task_operator_tooLateAtWindow",
            "flink_taskmanager_job_task_operator_validEvents",
            "flink_taskmanager_job_task_operator_reason_invalidEvents",
            "flink_taskmanager_job_task_operator_recordsPublished",
            "flink_jobmanager_job_lastCheckpointDuration",
            "flink_taskmanager_job_task_operator_rowsCommitted",
            "flink_jobmanager_job_numRestarts",
            "flink_jobmanager_job_numberOfFailedCheckpoints",
            "flink_taskmanager_job_task_operator_rowsRefused",
            "flink_taskmanager_job_task_operator_rowsRejected",
            "flink_taskmanager_job_task_operator_eventsAheadOfClock",
            "flink_taskmanager_job_task_operator_idlePartitions",
            "recount_reconcile_last_exit_code",
            "recount_reconcile_days_beyond_tolerance",
            "recount_reconcile_days_not_covered",
            "recount_reconcile_last_success_timestamp_seconds");

    static final String DATASOURCE = "${datasource}";

    @Test
    void everyQueryReadsMetricsThatExistAndTheNeededOnesAreShown() throws IOException {
        KnownMetrics known = KnownMetrics.ofRepository(Set.of());
        assertThat(GrafanaDashboards.files())
                .extracting(p -> p.getFileName().toString())
                .contains("recount.json");
        Set<String> shown = new TreeSet<>();
        for (Path file : GrafanaDashboards.files()) {
            List<GrafanaDashboards.Query> queries = GrafanaDashboards.queries(GrafanaDashboards.read(file));
            assertThat(queries).as(file.toString()).isNotEmpty();
            for (GrafanaDashboards.Query q : queries) {
                assertThat(q.expr()).as(q.where()).isNotBlank();
                assertThat(ManifestsTest.balanced(q.expr()))
                        .as("balanced brackets in %s", q.where())
                        .isTrue();
                shown.addAll(known.check(q.expr(), file.getFileName() + ": " + q.where()));
            }
        }
        assertThat(shown).containsAll(REQUIRED_METRICS);
    }

    @Test
    void panelsAreWellFormedAndTheirRunbookLinksExist() throws IOException {
        Set<String> anchors = markdownAnchors(ROOT.resolve("docs/operations.md"));
        Set<String> uids = new HashSet<>();
        for (Path file : GrafanaDashboards.files()) {
            JsonNode d = GrafanaDashboards.read(file);
            String name = file.getFileName().toString();
            assertThat(uids.add(d.path("uid").asText()))
                    .as("%s: a uid of its own", name)
                    .isTrue();
            assertThat(d.path("uid").asText()).as(name + " uid").matches("[a-z0-9-]{1,40}");
            assertThat(d.path("title").asText()).as(name + " title").isNotBlank();

            // The Prometheus is a variable, so the same JSON works when imported into another Grafana.
            Map<String, JsonNode> variables = new HashMap<>();
            for (JsonNode v : d.path("templating").path("list"))
                variables.put(v.path("name").asText(), v);
            assertThat(variables).as(name + " variables").containsKey("datasource");
            assertThat(variables.get("datasource").path("type").asText()).isEqualTo("datasource");
            assertThat(variables.get("datasource").path("query").asText()).isEqualTo("prometheus");

            Set<Integer> ids = new HashSet<>();
            List<int[]> cells = new ArrayList<>();
            for (JsonNode p : GrafanaDashboards.panels(d)) {
                String title = p.path("title").asText();
                assertThat(title).as(name + ": every panel has a title").isNotBlank();
                assertThat(ids.add(p.path("id").asInt()))
                        .as("%s: panel id of '%s' is unique", name, title)
                        .isTrue();
                JsonNode grid = p.path("gridPos");
                int x = grid.path("x").asInt(-1);
                int y = grid.path("y").asInt(-1);
                int w = grid.path("w").asInt(0);
                int h = grid.path("h").asInt(0);
                assertThat(x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= 24)
                        .as("%s: '%s' lies in the 24-column grid", name, title)
                        .isTrue();
                for (int[] c : cells) {
                    boolean apart = x + w <= c[0] || c[0] + c[2] <= x || y + h <= c[1] || c[1] + c[3] <= y;
                    assertThat(apart)
                            .as("%s: '%s' overlaps another panel", name, title)
                            .isTrue();
                }
                cells.add(new int[] {x, y, w, h});
                if (p.path("type").asText().equals("row")) continue;

                assertThat(p.path("description").asText())
                        .as("%s: '%s' says what it shows", name, title)
                        .isNotBlank();
                assertThat(p.path("datasource").path("uid").asText())
                        .as("%s: '%s' datasource", name, title)
                        .isEqualTo(DATASOURCE);
                Set<String> refIds = new HashSet<>();
                assertThat(p.path("targets").size())
                        .as("%s: '%s' has queries", name, title)
                        .isPositive();
                for (JsonNode t : p.path("targets")) {
                    assertThat(refIds.add(t.path("refId").asText()))
                            .as("%s: refIds of '%s' are unique", name, title)
                            .isTrue();
                    assertThat(t.path("datasource").path("uid").asText(DATASOURCE))
                            .isEqualTo(DATASOURCE);
                }
                Matcher link = Pattern.compile("docs/operations\\.md#([\\w-]+)")
                        .matcher(p.path("description").asText());
                while (link.find()) {
                    assertThat(anchors)
                            .as("%s: '%s' links to a section of docs/operations.md", name, title)
                            .contains(link.group(1));
                }
            }
        }
    }

    /**
     * The publishers' recordsPublished is split by topic through the operator_name label: the Sink V2 committer of the
     * sink named in StreamJob, as Flink's Prometheus reporter spells it (characters other than [a-zA-Z0-9:_] become
     * '_' unless filterLabelValueCharacters is off, so the regex must accept both spellings).
     */
    @Test
    void publishedRecordsAreSplitByTheCommittersOfTheJobsSinks() throws IOException {
        String stream = moduleSources("streaming-job");
        String deadLetters = stringConstant(stream, "DEAD_LETTER_SINK") + ": Committer";
        String backfill = stringConstant(stream, "BACKFILL_SINK") + ": Committer";
        Pattern operator = Pattern.compile("operator_name=~\"([^\"]+)\"");
        List<String> regexes = new ArrayList<>();
        for (Path file : GrafanaDashboards.files()) {
            for (GrafanaDashboards.Query q : GrafanaDashboards.queries(GrafanaDashboards.read(file))) {
                if (!q.expr().contains("recordsPublished")) continue;
                Matcher m = operator.matcher(q.expr());
                assertThat(m.find())
                        .as("%s selects one publisher by operator_name", q.where())
                        .isTrue();
                regexes.add(m.group(1));
            }
        }
        assertThat(regexes)
                .as("a query per topic")
                .anyMatch(r -> selects(r, deadLetters) && !selectsEither(r, backfill))
                .anyMatch(r -> selects(r, backfill) && !selectsEither(r, deadLetters));
    }

    @Test
    void composeProvisionsTheDashboardsOnItsOwnPrometheus() throws IOException {
        Map<String, Object> services = map(composeFile().get("services"));
        assertThat(services).containsKeys("grafana", "prometheus");
        Map<String, Object> grafana = map(services.get("grafana"));
        Map<String, Object> prometheus = map(services.get("prometheus"));
        assertThat(str(grafana, "image")).matches("grafana/grafana:\\d+\\.\\d+\\.\\d+");
        assertThat(strings(grafana.get("profiles"))).isEqualTo(strings(prometheus.get("profiles")));
        assertThat(strings(grafana.get("depends_on"))).contains("prometheus");
        assertThat(strings(grafana.get("ports"))).containsExactly("127.0.0.1:3000:3000");

        // Mounts: repository directory -> container directory.
        Map<Path, String> mounts = new HashMap<>();
        for (String v : strings(grafana.get("volumes"))) {
            String[] parts = v.split(":");
            assertThat(parts).as("volume " + v).hasSize(3);
            assertThat(parts[2]).as("volume %s is read-only", v).isEqualTo("ro");
            mounts.put(COMPOSE.resolve(parts[0]).normalize(), parts[1]);
        }
        Path provisioning = GrafanaDashboards.GRAFANA.resolve("provisioning");
        assertThat(mounts)
                .containsEntry(provisioning.resolve("datasources"), "/etc/grafana/provisioning/datasources")
                .containsEntry(provisioning.resolve("dashboards"), "/etc/grafana/provisioning/dashboards");
        String dashboardsDir = mounts.get(GrafanaDashboards.DIR);
        assertThat(dashboardsDir).as("the dashboards directory is mounted").isNotNull();

        // The provider loads the mounted directory; the home dashboard is one of its files.
        Map<String, Object> provider = map(list(map(loadOne(provisioning.resolve("dashboards/recount.yml")))
                        .get("providers"))
                .get(0));
        assertThat(str(provider, "type")).isEqualTo("file");
        assertThat(str(provider, "options", "path")).isEqualTo(dashboardsDir);
        String home = str(grafana, "environment", "GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH");
        assertThat(home).startsWith(dashboardsDir + "/");
        assertThat(GrafanaDashboards.DIR.resolve(home.substring(dashboardsDir.length() + 1)))
                .isRegularFile();

        // The datasource is the compose Prometheus, at the port its container listens on, scraped as often as it says.
        Map<String, Object> ds = map(list(map(loadOne(provisioning.resolve("datasources/prometheus.yml")))
                        .get("datasources"))
                .get(0));
        assertThat(str(ds, "type")).isEqualTo("prometheus");
        assertThat(ds.get("isDefault"))
                .as("the dashboards' datasource variable starts on it")
                .isEqualTo(true);
        String containerPort = strings(prometheus.get("ports")).get(0).replaceFirst(".*:", "");
        assertThat(str(ds, "url")).isEqualTo("http://prometheus:" + containerPort);
        assertThat(str(ds, "jsonData", "timeInterval"))
                .isEqualTo(str(loadOne(MONITORING.resolve("prometheus.yml")), "global", "scrape_interval"));

        // Who may do what: anyone who reaches the loopback port views, nobody signs up, the admin's password is .env's.
        Map<String, Object> env = map(grafana.get("environment"));
        assertThat(env)
                .containsEntry("GF_AUTH_ANONYMOUS_ENABLED", "true")
                .containsEntry("GF_AUTH_ANONYMOUS_ORG_ROLE", "Viewer")
                .containsEntry("GF_USERS_ALLOW_SIGN_UP", "false")
                .containsEntry("GF_SECURITY_ADMIN_PASSWORD", "${RECOUNT_GRAFANA_ADMIN_PASSWORD:-}");
        assertThat(properties(COMPOSE.resolve(".env.example")).stringPropertyNames())
                .contains("RECOUNT_GRAFANA_ADMIN_PASSWORD");
        assertThat(String.join(" ", strings(grafana.get("entrypoint")))).contains("exec /run.sh");
    }

    /** Whether the label regex selects the operator however the reporter spells it (Prometheus anchors it). */
    static boolean selects(String regex, String operatorName) {
        return operatorName.matches(regex) && filtered(operatorName).matches(regex);
    }

    static boolean selectsEither(String regex, String operatorName) {
        return operatorName.matches(regex) || filtered(operatorName).matches(regex);
    }

    static String filtered(String labelValue) {
        return labelValue.replaceAll("[^a-zA-Z0-9:_]", "_");
    }

    static String stringConstant(String sources, String name) {
        Matcher m = Pattern.compile("String " + name + " = \"([^\"]+)\"").matcher(sources);
        assertThat(m.find()).as("constant %s in the streaming job", name).isTrue();
        return m.group(1);
    }
}
