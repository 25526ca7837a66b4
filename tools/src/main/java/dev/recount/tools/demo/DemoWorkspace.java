package dev.recount.tools.demo;

import dev.recount.core.sets.MetricSets;
import dev.recount.db.Logins;
import dev.recount.db.Migrations;
import dev.recount.stack.embedded.StackLayout;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Everything the demo creates, kept apart from earlier runs and from the user's own data: topics
 * {@code demo-ad-events*}, schema {@code demo}, {@code <home>/demo/} (lake, checkpoints, reports, truth, logs) and
 * the config file every step reads, which names the demo's metric sets ({@link #METRIC_SETS}). Reset at the start of
 * every run.
 */
final class DemoWorkspace {
    static final String SCHEMA = "demo";
    /** The demo's attribution window: shorter than its few minutes of traffic, so some clicks fall beyond it. */
    static final String ATTRIBUTION_WINDOW = "2m";

    /** The demo's metric-sets file, under the repository root: three sets (the default, campaign_slot, channel_country). */
    static final String METRIC_SETS = "config/demo/metric-sets.yaml";

    static final String INPUT = "demo-ad-events";
    static final String DEAD_LETTER = "demo-ad-events-dlq";
    static final String BACKFILL = "demo-ad-events-late";
    static final int PARTITIONS = 3;

    private final StackLayout layout;
    private final Path dir;

    DemoWorkspace(StackLayout layout) {
        this.layout = layout;
        this.dir = layout.home().resolve("demo");
    }

    Path dir() {
        return dir;
    }

    Path configFile() {
        return dir.resolve("demo.properties");
    }

    Path log(String step) {
        return dir.resolve("logs").resolve(step + ".log");
    }

    Path truthDir() {
        return dir.resolve("truth");
    }

    Path reportDir() {
        return dir.resolve("reports");
    }

    /**
     * Writes the demo's config file: the stack's addresses (so in-process steps see them too; children also get
     * local.env's environment), the demo's own topics, schema, directories and metric sets, and its short timings.
     *
     * @param metricSets the definitions file every step is to count by ({@code metric-sets.file})
     */
    Path writeConfig(Map<String, String> env, String idleness, Path metricSets) throws IOException {
        Files.createDirectories(dir);
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("local.home", layout.home().toString());
        settings.put("kafka.bootstrap-servers", env.get("KAFKA_BOOTSTRAP_SERVERS"));
        settings.put("postgres.jdbc-url", env.get("RECOUNT_JDBC_URL"));
        settings.put("postgres.password-dir", layout.passwordDir().toString());
        settings.put("topics.input", INPUT);
        settings.put("topics.dead-letter", DEAD_LETTER);
        settings.put("topics.backfill", BACKFILL);
        settings.put("topics.input-partitions", Integer.toString(PARTITIONS));
        settings.put("lake.path", dir.resolve("lake").toString());
        settings.put("stream.checkpoint-dir", dir.resolve("checkpoints").toString());
        // Short checkpoints: rows become visible at each checkpoint, and the demo should not wait long for them.
        settings.put("stream.checkpoint-interval", "2s");
        settings.put("stream.web-ui-port", "0");
        settings.put("watermark.idleness", idleness);
        settings.put("postgres.schema", SCHEMA);
        settings.put("reconcile.report-dir", reportDir().toString());
        // Attribution on, with a window shorter than the run, so some clicks fall beyond it (the generator's delays
        // are heavy-tailed): the summary and the report then show attributed and unattributed clicks.
        settings.put("attribution.enabled", "true");
        settings.put("attribution.window", ATTRIBUTION_WINDOW);
        // The sets migrate creates tables for, and stream, backfill, correct and reconcile compute and check.
        settings.put(MetricSets.FILE_SETTING, metricSets.toAbsolutePath().toString());
        StringBuilder file =
                new StringBuilder("# Written by `./recount demo` for its own workspace; rewritten every run.\n");
        settings.forEach((k, v) ->
                file.append(k).append('=').append(v.replace("\\", "\\\\")).append('\n'));
        Files.writeString(configFile(), file.toString(), StandardCharsets.UTF_8);
        return configFile();
    }

    /**
     * Drops what an earlier run left: directories, topics and consumer groups, the schema; then migrates it afresh,
     * with the objects of every set of {@code sets}.
     */
    void reset(Map<String, String> env, MetricSets sets) throws Exception {
        for (String sub : List.of("lake", "checkpoints", "reports", "truth", "logs")) deleteTree(dir.resolve(sub));
        try (Admin admin = Admin.create(DemoConnections.kafka(env))) {
            List<String> topics = List.of(INPUT, DEAD_LETTER, BACKFILL);
            var existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<String> old = topics.stream().filter(existing::contains).toList();
            if (!old.isEmpty()) {
                admin.deleteTopics(old).all().get(30, TimeUnit.SECONDS);
                Waits.awaitCondition(
                        Duration.ofSeconds(60),
                        "old demo topics to be deleted",
                        () -> admin.listTopics().names().get(10, TimeUnit.SECONDS).stream()
                                .noneMatch(old::contains));
            }
            admin.createTopics(topics.stream()
                            .map(t -> new NewTopic(t, PARTITIONS, (short) 1))
                            .toList())
                    .all()
                    .get(30, TimeUnit.SECONDS);
            List<String> groups = admin.listGroups().all().get(30, TimeUnit.SECONDS).stream()
                    .map(GroupListing::groupId)
                    .filter(g -> g.startsWith("demo"))
                    .toList();
            if (!groups.isEmpty()) admin.deleteConsumerGroups(groups).all().get(30, TimeUnit.SECONDS);
        }
        try (Connection c = DemoConnections.admin(env);
                Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
        }
        Migrations.apply(env.get("RECOUNT_JDBC_URL"), env.get("PGUSER"), env.get("PGPASSWORD"), SCHEMA, sets);
        try (Connection c = DemoConnections.admin(env)) {
            Logins.ensureLocal(c, SCHEMA, layout.passwordDir());
        }
    }

    /** The newest reconciliation report, or the report directory when there is none. */
    Path newestReport() throws IOException {
        Path reports = reportDir();
        if (!Files.isDirectory(reports)) return reports;
        try (var dirs = Files.list(reports)) {
            return dirs.filter(Files::isDirectory)
                    .max(Comparator.comparingLong(d -> d.toFile().lastModified()))
                    .map(d -> d.resolve("report.html"))
                    .orElse(reports);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
