package dev.recount.deploy.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import dev.recount.core.config.Component;
import dev.recount.core.config.Durations;
import dev.recount.core.config.RecountConfig;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The cluster files (deploy/k8s, deploy/compose, deploy/monitoring, deploy/docker) checked against the build, since
 * nothing here can run Docker or Kubernetes: every file parses; every image is built by the Dockerfile or pinned to
 * the versions the build uses; every jar path is where the Dockerfile puts an artifact the poms produce; every main
 * class exists in the source tree; every subcommand and option exists in the module that will parse it; every
 * config key is one of config/recount.properties and the values agree with the manifests around them; secrets come
 * from Secrets; the alert rules are well formed, use metrics the job registers ({@link KnownMetrics}), link to an
 * existing runbook section and each fire in a promtool test. The dashboards: {@link GrafanaDashboardTest}; promtool
 * itself runs in {@link PromtoolITCase}.
 */
class ManifestsTest {
    static final Path ROOT = repositoryRoot();
    static final Path K8S = ROOT.resolve("deploy/k8s");
    static final Path COMPOSE = ROOT.resolve("deploy/compose");
    static final Path MONITORING = ROOT.resolve("deploy/monitoring");
    static final Path DOCKERFILE = ROOT.resolve("deploy/docker/Dockerfile");
    static final String CONFIG_PATH = "/etc/recount/recount.properties";
    static final String CONFIG_MAP = "recount-config";

    static final Map<String, String> MODULE_OF_PACKAGE = Map.of(
            "core",
            "core",
            "db",
            "db",
            "stack",
            "local-stack",
            "tools",
            "tools",
            "stream",
            "streaming-job",
            "batch",
            "batch-backfill",
            "reconcile",
            "reconciler",
            "ops",
            "operations",
            "testkit",
            "testkit");

    // ---- every file parses ---------------------------------------------------------------------------------------

    @Test
    void everyYamlFileParsesAndEveryKubernetesObjectIsNamed() throws IOException {
        List<Path> files = yamlFiles(K8S, COMPOSE, MONITORING);
        assertThat(files)
                .extracting(p -> ROOT.relativize(p).toString().replace('\\', '/'))
                .contains(
                        "deploy/k8s/kustomization.yaml",
                        "deploy/k8s/flink-deployment.yaml",
                        "deploy/k8s/backfill-scheduled.yaml",
                        "deploy/k8s/lake-compact-scheduled.yaml",
                        "deploy/k8s/reconcile-cronjob.yaml",
                        "deploy/k8s/correct-cronjob.yaml",
                        "deploy/compose/docker-compose.yml",
                        "deploy/monitoring/alerts.yml",
                        "deploy/monitoring/prometheus.yml");
        for (Path f : files) {
            List<Object> docs = loadAll(f);
            assertThat(docs).as(f.toString()).isNotEmpty().doesNotContainNull();
        }
        for (Map<String, Object> o : allK8sObjects()) {
            assertThat(o).as("a Kubernetes object").containsKeys("apiVersion", "kind", "metadata");
            Map<String, Object> meta = map(o.get("metadata"));
            Object name = meta.containsKey("name") ? meta.get("name") : meta.get("generateName");
            assertThat(name)
                    .as("metadata.name (or generateName) of a %s", o.get("kind"))
                    .isInstanceOf(String.class);
            assertThat((String) name).isNotBlank();
        }
    }

    @Test
    void kustomizationListsEveryManifestAndItsGeneratorInputsExist() throws IOException {
        Map<String, Object> k = map(loadOne(K8S.resolve("kustomization.yaml")));
        List<String> resources = strings(k.get("resources"));
        for (String r : resources)
            assertThat(K8S.resolve(r)).as("kustomization resource").isRegularFile();
        try (Stream<Path> s = Files.list(K8S)) {
            List<String> manifests = s.filter(p -> p.toString().endsWith(".yaml") && !p.endsWith("kustomization.yaml"))
                    .map(p -> p.getFileName().toString())
                    .sorted()
                    .toList();
            assertThat(resources).as("every manifest in deploy/k8s is applied").containsAll(manifests);
        }
        for (Object gen : list(k.get("configMapGenerator"))) {
            for (String file : strings(map(gen).get("files"))) {
                String path = file.contains("=") ? file.substring(file.indexOf('=') + 1) : file;
                assertThat(K8S.resolve(path)).isRegularFile();
            }
        }
        for (Object gen : list(k.get("secretGenerator"))) {
            for (String env : strings(map(gen).get("envs"))) {
                // The real .env files are not in git; their templates are.
                assertThat(K8S.resolve(env + ".example"))
                        .as("template of " + env)
                        .isRegularFile();
            }
        }
        assertThat(K8S.resolve("secrets/.gitignore")).content().contains("*.env");
        for (String config : strings(k.get("configurations")))
            assertThat(K8S.resolve(config)).isRegularFile();
    }

    // ---- images ---------------------------------------------------------------------------------------------------

    @Test
    void imagesAreBuiltByTheDockerfileOrPinnedToTheVersionsOfTheBuild() throws IOException {
        String version = projectVersion();
        Map<String, String> props = rootPomProperties();
        Set<String> stages = dockerStages();
        Map<String, String> args = dockerArgs();
        assertThat(stages).contains("build", "recount", "recount-flink", "recount-spark");

        Set<String> images = new TreeSet<>();
        for (Map<String, Object> o : allK8sObjects()) collectValues(o, "image", images);
        Map<String, Object> compose = composeFile();
        for (Map.Entry<String, Object> svc : map(compose.get("services")).entrySet()) {
            Map<String, Object> s = map(svc.getValue());
            images.add(str(s, "image"));
            if (s.get("build") != null) {
                // A service that builds tags the stage it builds: the name must be that stage's.
                String target = str(s, "build", "target");
                assertThat(stages)
                        .as("compose service %s builds a Dockerfile stage", svc.getKey())
                        .contains(target);
                assertThat(str(s, "image")).isEqualTo(target + ":" + version);
                assertThat(str(s, "build", "dockerfile")).isEqualTo("deploy/docker/Dockerfile");
                assertThat(COMPOSE.resolve(str(s, "build", "context")).normalize())
                        .isEqualTo(ROOT.normalize());
            }
        }
        images.add(args.get("FLINK_IMAGE"));
        images.add(args.get("SPARK_IMAGE"));

        String flinkMinor = minor(props.get("flink.version"));
        for (String image : images) {
            assertThat(image)
                    .as("image %s has an explicit tag", image)
                    .contains(":")
                    .doesNotEndWith(":latest");
            String name = image.substring(0, image.lastIndexOf(':'));
            String tag = image.substring(image.lastIndexOf(':') + 1);
            switch (name) {
                case "recount", "recount-flink", "recount-spark" -> {
                    assertThat(stages).as("Dockerfile stage for " + image).contains(name);
                    assertThat(tag).as(image).isEqualTo(version);
                }
                case "flink" ->
                    assertThat(tag)
                            .as(image)
                            .startsWith(props.get("flink.version"))
                            .endsWith("-java17");
                case "spark" -> assertThat(tag).as(image).startsWith(props.get("spark.version") + "-scala2.12-java17");
                case "apache/kafka" -> assertThat(tag).as(image).isEqualTo(props.get("kafka.version"));
                case "flyway/flyway" -> assertThat(tag).as(image).isEqualTo(props.get("flyway.version"));
                case "postgres" ->
                    assertThat(tag)
                            .as("PostgreSQL major of the embedded binaries")
                            .isEqualTo(props.get("zonky.binaries.version").split("\\.")[0]);
                case "prom/prometheus", "prom/pushgateway" -> assertThat(tag).matches("v\\d+\\.\\d+\\.\\d+");
                case "grafana/grafana" -> assertThat(tag).matches("\\d+\\.\\d+\\.\\d+");
                default -> throw new AssertionError("unexpected image " + image + ": add it to this test deliberately");
            }
        }
        // The operator's flinkVersion names the Flink the image runs.
        assertThat(str(flinkDeployment(), "spec", "flinkVersion")).isEqualTo("v" + flinkMinor.replace('.', '_'));
        assertThat(str(sparkApplication(), "sparkVersion")).isEqualTo(props.get("spark.version"));
        // S3A for Spark: the hadoop-aws of the Hadoop Spark is built with.
        assertThat(args.get("HADOOP_AWS_VERSION")).isEqualTo(props.get("spark.hadoop.version"));
    }

    // ---- jars -------------------------------------------------------------------------------------------------------

    @Test
    void jarPathsAreWhereTheDockerfilePutsArtifactsThePomsProduce() throws IOException {
        String dockerfile = Files.readString(DOCKERFILE);
        Map<String, String> copies = dockerCopies(dockerfile);
        Set<String> produced = producedJars();
        assertThat(produced)
                .contains(
                        "streaming-job/target/streaming-job-" + projectVersion() + "-flink.jar",
                        "batch-backfill/target/spark-app/recount-batch-backfill-" + projectVersion() + ".jar");

        Set<String> referenced = new TreeSet<>();
        Pattern jar = Pattern.compile("[\\w:/.${}-]+\\.jar");
        for (String text : allManifestStrings()) {
            Matcher m = jar.matcher(text);
            while (m.find()) referenced.add(m.group().replaceFirst("^local://", ""));
        }
        assertThat(referenced).as("jars the manifests run").isNotEmpty();
        for (String path : referenced) {
            assertThat(copies).as("the Dockerfile puts a file at " + path).containsKey(path);
            String source = copies.get(path);
            assertThat(source).as("source of " + path).startsWith("/src/");
            assertThat(produced).as("%s is built by the poms", source).contains(source.substring("/src/".length()));
        }
    }

    // ---- main classes -----------------------------------------------------------------------------------------------

    @Test
    void mainClassesExistAndAreTheMainClassesOfTheirJars() throws IOException {
        Pattern cls = Pattern.compile("dev\\.recount\\.[a-z]+(?:\\.[a-z]+)*\\.[A-Z]\\w*");
        Set<String> classes = new TreeSet<>();
        for (String text : allManifestStrings()) {
            Matcher m = cls.matcher(text);
            while (m.find()) classes.add(m.group());
        }
        assertThat(classes).contains("dev.recount.stream.StreamJobMain", "dev.recount.batch.BackfillMain");
        for (String c : classes) assertThat(sourceOf(c)).as("source of " + c).isRegularFile();

        // What the jar's manifest says is what the manifests start.
        assertThat(str(flinkDeployment(), "spec", "job", "entryClass"))
                .isEqualTo(shadeMainClass(ROOT.resolve("streaming-job/pom.xml")));
        assertThat(str(sparkApplication(), "mainClass"))
                .isEqualTo(shadeMainClass(ROOT.resolve("batch-backfill/pom.xml")));
    }

    // ---- arguments --------------------------------------------------------------------------------------------------

    @Test
    void argumentsNameSubcommandsAndOptionsThatExist() throws IOException {
        Map<String, Object> flink = flinkDeployment();
        checkProgram(
                str(flink, "spec", "job", "entryClass"), strings(at(flink, "spec", "job", "args")), "FlinkDeployment");

        Map<String, Object> spark = sparkApplication();
        checkProgram(str(spark, "mainClass"), strings(spark.get("arguments")), "ScheduledSparkApplication");
        Map<String, Object> compact = compactionApplication();
        checkProgram(
                str(compact, "mainClass"), strings(compact.get("arguments")), "ScheduledSparkApplication compaction");
        Map<String, Object> range = map(onDemand("SparkApplication").get("spec"));
        checkProgram(str(range, "mainClass"), strings(range.get("arguments")), "ondemand SparkApplication");

        // The recount image's entrypoint is the launcher: a container of it without a command runs `recount <args>`.
        assertThat(Files.readString(DOCKERFILE)).contains("ENTRYPOINT [\"/opt/recount/recount\"]");
        int launcherRuns = 0;
        for (Map<String, Object> o : allK8sObjects()) {
            List<Map<String, Object>> containers = new ArrayList<>();
            visitMaps(o, (m, path) -> {
                if (m.get("image") instanceof String image && image.startsWith("recount:")) containers.add(m);
            });
            for (Map<String, Object> c : containers) {
                if (c.get("command") == null) {
                    checkLauncher(strings(c.get("args")), o.get("kind") + " " + c.get("name"));
                    launcherRuns++;
                } else {
                    String first = strings(c.get("command")).get(0);
                    if (first.startsWith("/opt/recount/"))
                        assertThat(imagePathToRepo(first)).isRegularFile();
                }
            }
        }
        assertThat(launcherRuns).as("on-demand reconcile runs the launcher").isPositive();

        // The scheduled reconcile and correct CronJobs run the launcher itself (covered by the loop above).
        assertThat(cronJobContainer().get("command"))
                .as("the reconcile CronJob runs the launcher")
                .isNull();
        assertThat(strings(cronJobContainer().get("args")).subList(0, 2)).containsExactly("reconcile", "pending");
        assertThat(strings(correctContainer().get("args")).get(0)).isEqualTo("correct");

        // Compose: the JobManager's application-mode command and the spark-submit of the backfill service.
        Map<String, Object> services = map(composeFile().get("services"));
        List<String> jm = strings(map(services.get("jobmanager")).get("command"));
        assertThat(jm.subList(0, 2)).containsExactly("standalone-job", "--job-classname");
        checkProgram(jm.get(2), jm.subList(3, jm.size()), "compose jobmanager");

        Map<String, Object> backfill = map(services.get("backfill"));
        String submit = String.join(" ", strings(backfill.get("entrypoint")));
        Matcher cls = Pattern.compile("--class (\\S+)").matcher(submit);
        assertThat(cls.find()).as("spark-submit --class in " + submit).isTrue();
        checkProgram(cls.group(1), strings(backfill.get("command")), "compose backfill");
    }

    // ---- config -----------------------------------------------------------------------------------------------------

    @Test
    void configFilesUseOnlyValidKeysAndValues() throws IOException {
        Set<String> valid =
                properties(ROOT.resolve("config/recount.properties")).stringPropertyNames();
        for (Path file : List.of(K8S.resolve("config/recount.properties"), COMPOSE.resolve("recount.properties"))) {
            assertThat(valid).as("keys of " + file).containsAll(properties(file).stringPropertyNames());
            // RecountConfig refuses unknown keys itself; reading every typed value checks the values too.
            RecountConfig c = RecountConfig.load(file, Map.of());
            c.eventTime();
            c.timeZone();
            c.topics();
            c.adminPostgres();
            c.duration("stream.checkpoint-interval");
            c.duration("batch.lock-timeout");
            assertThat(c.adminPassword()).as("no password in " + file).isNull();
            for (Component component : Component.values()) {
                assertThat(c.postgres(component).user())
                        .as("the %s login of %s", component.key(), file)
                        .isNotEqualTo(c.adminPostgres().user());
                assertThat(c.password(component))
                        .as("no %s password in %s", component.key(), file)
                        .isNull();
            }
        }
    }

    @Test
    void kubernetesManifestsAgreeWithTheConfigMap() throws IOException {
        RecountConfig c = RecountConfig.load(K8S.resolve("config/recount.properties"), Map.of());
        Map<String, Object> flink = flinkDeployment();
        Map<String, Object> conf = map(at(flink, "spec", "flinkConfiguration"));

        assertThat(c.get("stream.checkpoint-dir"))
                .startsWith("s3a://")
                .isEqualTo(conf.get("execution.checkpointing.dir"));
        assertThat(str(conf, "execution.checkpointing.savepoint-dir")).startsWith("s3a://");
        assertThat(str(conf, "high-availability.storageDir")).startsWith("s3a://");
        assertThat(c.get("lake.path")).startsWith("s3a://");
        assertThat(Durations.parse(str(conf, "execution.checkpointing.interval")))
                .isEqualTo(c.duration("stream.checkpoint-interval"));
        assertThat(at(flink, "spec", "job", "parallelism")).isEqualTo(c.integer("stream.parallelism"));
        assertThat(str(flink, "spec", "job", "upgradeMode")).isEqualTo("savepoint");
        assertThat(str(flink, "spec", "job", "jarURI")).startsWith("local:///opt/flink/usrlib/");
        // Nothing exposed outside the cluster, and no jar upload through the REST API.
        assertThat(str(conf, "kubernetes.rest-service.exposed.type")).isEqualTo("ClusterIP");
        assertThat(str(conf, "web.submit.enable")).isEqualTo("false");

        Map<String, Object> cron = k8sObject("CronJob", "recount-reconcile");
        assertThat(str(cron, "spec", "timeZone"))
                .as("the CronJob's day is the config's day")
                .isEqualTo(c.get("time-zone"));
        assertThat(str(cron, "spec", "concurrencyPolicy")).isEqualTo("Forbid");
        Map<String, Object> correct = k8sObject("CronJob", "recount-correct");
        assertThat(str(correct, "spec", "concurrencyPolicy"))
                .as("correct runs never overlap")
                .isEqualTo("Forbid");
        assertThat(str(correct, "spec", "schedule")).isEqualTo("*/5 * * * *");
        checkConfigMounted(
                map(at(correct, "spec", "jobTemplate", "spec", "template", "spec")), "correct", "CronJob correct");
        // correct runs backfill affected (the batch login, the lake) and reconcile (the reconciler's login).
        assertThat(secretRefs(correctContainer()))
                .contains("recount-db-batch", "recount-db-reconciler", "recount-s3")
                .doesNotContain("recount-db-admin");
        assertThat(str(k8sObject("ScheduledSparkApplication", "recount-backfill-nightly"), "spec", "concurrencyPolicy"))
                .isEqualTo("Forbid");
        // Compaction: yesterday and the late files of the days before it, after the nightly backfill and before the
        // reconciliation, never two at once.
        Map<String, Object> compaction = k8sObject("ScheduledSparkApplication", "recount-lake-compact");
        assertThat(str(compaction, "spec", "concurrencyPolicy")).isEqualTo("Forbid");
        assertThat(strings(compactionApplication().get("arguments"))).startsWith("compact", "--lookback");
        assertThat(str(compaction, "spec", "schedule")).isEqualTo("30 2 * * *");
        assertThat(str(k8sObject("ScheduledSparkApplication", "recount-backfill-nightly"), "spec", "schedule"))
                .isEqualTo("30 1 * * *");
        assertThat(str(k8sObject("CronJob", "recount-reconcile"), "spec", "schedule"))
                .isEqualTo("30 3 * * *");
        assertThat(strings(cronJobContainer().get("args")))
                .containsSubsequence("--report-dir", c.get("reconcile.report-dir"));

        // The migrate Job runs recount's own migrate (Flyway, then the metric sets of the config's metric-sets.file,
        // which the ConfigMap carries beside the config).
        Map<String, Object> migrateSpec = map(at(k8sObject("Job", "recount-migrate"), "spec", "template", "spec"));
        assertThat(strings(container(migrateSpec, "migrate").get("args")))
                .containsExactly("migrate", "--config", "/etc/recount/recount.properties");
        checkConfigMounted(migrateSpec, "migrate", "migrate Job");
        assertThat(c.get("metric-sets.file")).isEqualTo("/etc/recount/metric-sets.yaml");
        assertThat(K8S.resolve("config/metric-sets.yaml")).isRegularFile();
        assertThat(dev.recount.core.sets.MetricSets.parse(
                                java.nio.file.Files.readString(K8S.resolve("config/metric-sets.yaml")),
                                "deploy/k8s/config/metric-sets.yaml",
                                c)
                        .sets())
                .isNotEmpty();

        // Every pod that is given --config mounts the ConfigMap there.
        checkConfigMounted(map(at(flink, "spec", "podTemplate", "spec")), "flink-main-container", "FlinkDeployment");
        checkConfigMounted(map(at(cron, "spec", "jobTemplate", "spec", "template", "spec")), "reconcile", "CronJob");
        for (Map<String, Object> spark : List.of(
                sparkApplication(),
                compactionApplication(),
                map(onDemand("SparkApplication").get("spec")))) {
            checkVolumeIsConfigMap(list(spark.get("volumes")), mountedVolume(map(spark.get("driver")), "Spark driver"));
        }
        checkConfigMounted(map(at(onDemand("Job"), "spec", "template", "spec")), "reconcile", "ondemand Job");
    }

    @Test
    void composeAgreesWithItsConfig() throws IOException {
        RecountConfig c = RecountConfig.load(COMPOSE.resolve("recount.properties"), Map.of());
        Map<String, Object> services = map(composeFile().get("services"));

        String init = String.join(" ", strings(map(services.get("kafka-init")).get("command")));
        for (String topic :
                List.of(c.topics().input(), c.topics().deadLetter(), c.topics().backfill())) {
            assertThat(init).as("kafka-init creates " + topic).contains(topic);
        }
        assertThat(init).contains("--partitions " + c.topics().inputPartitions());

        List<String> flyway = strings(map(services.get("migrate")).get("command"));
        assertThat(flyway)
                .contains(
                        "-url=" + c.get("postgres.jdbc-url"),
                        "-schemas=" + c.get("postgres.schema"),
                        "-user=" + c.get("postgres.user"));
        assertThat(ROOT.resolve("db/src/main/resources/db/migration")).isDirectory();
        // db-logins creates the logins the components default to, for the config's schema.
        Map<String, Object> logins = map(map(services.get("db-logins")).get("environment"));
        assertThat(logins)
                .containsEntry("RECOUNT_SCHEMA", c.get("postgres.schema"))
                .containsEntry("PGUSER", c.get("postgres.user"));
        // Compose's own escaping ($$) undone: what the shell runs.
        String loginScript = String.join(
                        " ", strings(map(services.get("db-logins")).get("command")))
                .replace("$$", "$");
        assertThat(loginScript)
                .contains(
                        "for c in stream batch reconciler finance",
                        "login=\"${RECOUNT_SCHEMA}_${c}_login\"",
                        "grp=\"${RECOUNT_SCHEMA}_${c}_role\"");
        for (Component component : Component.values()) {
            assertThat(component.defaultUser(c.get("postgres.schema")))
                    .isEqualTo(c.get("postgres.schema") + "_" + component.key() + "_login");
        }

        String flinkProps = str(services.get("jobmanager"), "environment", "FLINK_PROPERTIES");
        assertThat(flinkProps)
                .contains("execution.checkpointing.dir: " + c.get("stream.checkpoint-dir"))
                .contains("parallelism.default: " + c.get("stream.parallelism"))
                .contains(
                        "metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
                .contains("metrics.reporter.prom.port: 9249");
        for (String svc : List.of("jobmanager", "taskmanager", "spark-worker", "backfill", "recount")) {
            assertThat(strings(map(services.get(svc)).get("volumes")))
                    .as(svc + " sees the config and the shared data volume")
                    .contains("./recount.properties:" + CONFIG_PATH + ":ro", "recount-data:/data");
        }
        assertThat(c.get("lake.path")).startsWith("file:///data/");
        assertThat(c.get("stream.checkpoint-dir")).startsWith("file:///data/");
    }

    // ---- secrets ----------------------------------------------------------------------------------------------------

    @Test
    void passwordsComeFromSecretsOnly() throws IOException {
        Map<String, Object> kustomization = map(loadOne(K8S.resolve("kustomization.yaml")));
        Map<String, Properties> generated = new HashMap<>();
        for (Object gen : list(kustomization.get("secretGenerator"))) {
            Properties p = new Properties();
            for (String env : strings(map(gen).get("envs"))) p.putAll(properties(K8S.resolve(env + ".example")));
            generated.put(str(gen, "name"), p);
        }
        // Each component's database login, from its own Secret, under the variable names the config reads.
        Map<String, List<String>> secretRefs = new LinkedHashMap<>();
        secretRefs.put(
                "FlinkDeployment",
                secretRefs(
                        container(map(at(flinkDeployment(), "spec", "podTemplate", "spec")), "flink-main-container")));
        secretRefs.put(
                "ScheduledSparkApplication", secretRefs(map(sparkApplication().get("driver"))));
        secretRefs.put(
                "ScheduledSparkApplication compaction",
                secretRefs(map(compactionApplication().get("driver"))));
        secretRefs.put("CronJob", secretRefs(cronJobContainer()));
        secretRefs.put("SparkApplication", secretRefs(map(at(onDemand("SparkApplication"), "spec", "driver"))));
        secretRefs.put("Job", secretRefs(container(map(at(onDemand("Job"), "spec", "template", "spec")), "reconcile")));
        Map<String, Component> expected = Map.of(
                "FlinkDeployment",
                Component.STREAM,
                "ScheduledSparkApplication",
                Component.BATCH,
                "ScheduledSparkApplication compaction",
                Component.BATCH,
                "CronJob",
                Component.RECONCILER,
                "SparkApplication",
                Component.BATCH,
                "Job",
                Component.RECONCILER);
        RecountConfig defaults = RecountConfig.defaults();
        expected.forEach((kind, component) -> {
            String secret = "recount-db-" + component.key();
            assertThat(secretRefs.get(kind)).as(kind).contains(secret).doesNotContain("recount-db-admin");
            assertThat(generated).as("Secret " + secret + " is generated").containsKey(secret);
            assertThat(generated.get(secret).stringPropertyNames())
                    .as("keys of Secret " + secret)
                    .containsExactlyInAnyOrder(
                            component.userVariable(), defaults.get("postgres." + component.key() + ".password-env"));
        });
        assertThat(generated.get("recount-db-admin").stringPropertyNames()).contains("PGUSER", "PGPASSWORD");
        assertThat(generated.get("recount-s3").stringPropertyNames())
                .contains("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY");

        // No literal password anywhere in a manifest: a variable named *PASSWORD* is always taken from a Secret.
        for (Map<String, Object> o : allK8sObjects()) {
            visitMaps(o, (m, path) -> {
                Object name = m.get("name");
                if (name instanceof String n
                        && n.toUpperCase(Locale.ROOT).contains("PASSWORD")
                        && m.containsKey("value")) {
                    throw new AssertionError("literal value for " + n + " in " + o.get("kind") + " " + path);
                }
            });
        }
        // Compose: every password comes from .env; the administrator's only reaches the services that create the
        // schema and the logins, each component gets only its own login's password, under the name the config reads.
        Properties envExample = properties(COMPOSE.resolve(".env.example"));
        Map<String, Set<String>> passwordsOf = new HashMap<>();
        for (Map.Entry<String, Object> svc : map(composeFile().get("services")).entrySet()) {
            Object env = map(svc.getValue()).get("environment");
            if (env == null) continue;
            map(env).forEach((k, v) -> {
                if (k.contains("PASSWORD")) {
                    // ${X:?...}: compose refuses to run without it. ${X:-}: only this service needs it, so it must
                    // refuse to start without it itself (compose checks :? even for services of inactive profiles).
                    Matcher m = Pattern.compile("^\\$\\{(RECOUNT_\\w*PASSWORD):([?-])")
                            .matcher(String.valueOf(v));
                    assertThat(m.find())
                            .as(svc.getKey() + " " + k + " comes from .env")
                            .isTrue();
                    assertThat(envExample.stringPropertyNames())
                            .as(".env.example names " + m.group(1))
                            .contains(m.group(1));
                    if (m.group(2).equals("-")) {
                        assertThat(String.join(" ", strings(map(svc.getValue()).get("entrypoint"))))
                                .as("%s refuses to start without %s", svc.getKey(), k)
                                .contains("[ -n \"$$" + k + "\" ]", "exit 1");
                    }
                    passwordsOf
                            .computeIfAbsent(svc.getKey(), x -> new TreeSet<>())
                            .add(k + "=" + m.group(1));
                }
            });
        }
        assertThat(passwordsOf.get("jobmanager"))
                .containsExactly("RECOUNT_STREAM_PGPASSWORD=RECOUNT_PG_STREAM_PASSWORD");
        assertThat(passwordsOf.get("taskmanager"))
                .containsExactly("RECOUNT_STREAM_PGPASSWORD=RECOUNT_PG_STREAM_PASSWORD");
        assertThat(passwordsOf.get("backfill")).containsExactly("RECOUNT_BATCH_PGPASSWORD=RECOUNT_PG_BATCH_PASSWORD");
        assertThat(passwordsOf.get("recount"))
                .containsExactly(
                        "RECOUNT_BATCH_PGPASSWORD=RECOUNT_PG_BATCH_PASSWORD",
                        "RECOUNT_RECONCILER_PGPASSWORD=RECOUNT_PG_RECONCILER_PASSWORD");
        assertThat(passwordsOf.get("grafana"))
                .containsExactly("GF_SECURITY_ADMIN_PASSWORD=RECOUNT_GRAFANA_ADMIN_PASSWORD");
        for (Component component : Component.values()) {
            assertThat(defaults.get("postgres." + component.key() + ".password-env"))
                    .isEqualTo("RECOUNT_" + component.name() + "_PGPASSWORD");
        }
        passwordsOf.forEach((svc, passwords) -> {
            if (passwords.stream().anyMatch(p -> p.endsWith("=RECOUNT_PG_PASSWORD"))) {
                assertThat(svc)
                        .as("a service with the administrator's password")
                        .isIn("postgres", "migrate", "db-logins");
            }
        });
    }

    // ---- nothing beyond loopback, nothing world-writable ----------------------------------------------------------

    @Test
    void composePublishesEveryPortOnLoopbackOnly() throws IOException {
        int published = 0;
        for (Map.Entry<String, Object> svc : map(composeFile().get("services")).entrySet()) {
            for (Object port : list(map(svc.getValue()).get("ports"))) {
                // Short syntax HOST_IP:HOST_PORT:CONTAINER_PORT; without a host IP Docker binds every interface.
                assertThat(String.valueOf(port))
                        .as("port of " + svc.getKey())
                        .matches("127\\.0\\.0\\.1:\\d+:\\d+(/tcp)?");
                published++;
            }
        }
        assertThat(published).as("ports compose publishes").isGreaterThanOrEqualTo(6);
    }

    @Test
    void composeCreatesNoWorldWritableDirectories() throws IOException {
        List<String> commands = new ArrayList<>();
        for (Map.Entry<String, Object> svc : map(composeFile().get("services")).entrySet()) {
            for (String key : List.of("command", "entrypoint")) {
                Object v = map(svc.getValue()).get(key);
                if (v instanceof String text) commands.add(text);
                if (v instanceof List<?>) commands.add(String.join(" ", strings(v)));
            }
        }
        int chmods = 0;
        Matcher m = Pattern.compile("chmod\\s+(?:-R\\s+)?(\\S+)").matcher(String.join("\n", commands));
        while (m.find()) {
            chmods++;
            assertThat(grantsOthersWrite(m.group(1)))
                    .as("chmod %s makes something world-writable", m.group(1))
                    .isFalse();
        }
        assertThat(chmods).as("data-init sets the modes of the shared volume").isPositive();
        assertThat(String.join(" ", commands)).doesNotContain("777");
    }

    /** Octal: the others digit has the write bit; symbolic: o or a (or no who) gains w. */
    static boolean grantsOthersWrite(String mode) {
        if (mode.matches("[0-7]{3,4}")) return (Character.digit(mode.charAt(mode.length() - 1), 8) & 2) != 0;
        for (String clause : mode.split(",")) {
            Matcher c = Pattern.compile("([ugoa]*)([+=])([rwxXst]*)").matcher(clause);
            if (c.matches()
                    && c.group(3).contains("w")
                    && (c.group(1).isEmpty()
                            || c.group(1).contains("o")
                            || c.group(1).contains("a"))) {
                return true;
            }
        }
        return false;
    }

    @Test
    void sparkRunsWithTheJava17Opens() throws IOException {
        List<String> opens =
                Arrays.asList(rootPomProperties().get("java17.opens").trim().split("\\s+"));
        for (Map<String, Object> app : List.of(
                sparkApplication(),
                compactionApplication(),
                map(onDemand("SparkApplication").get("spec")))) {
            Map<String, Object> conf = map(app.get("sparkConf"));
            for (String key : List.of("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")) {
                assertThat(Arrays.asList(str(conf, key).split("\\s+"))).as(key).containsAll(opens);
            }
        }
        String submit = String.join(
                " ",
                strings(map(map(composeFile().get("services")).get("backfill")).get("entrypoint")));
        for (String flag : opens) assertThat(submit).as("compose spark-submit").contains(flag);
    }

    // ---- monitoring -------------------------------------------------------------------------------------------------

    /**
     * The scheduled commands push their outcome only where RECOUNT_PUSHGATEWAY_URL is set: without it on Kubernetes,
     * the alerts on recount_reconcile_*, recount_correct_*, recount_backfill_nightly_* and recount_lake_compact_*
     * would stay silent (they stay silent where nothing was ever pushed).
     */
    @Test
    void everyScheduledCommandThatPushesIsToldWhereThePushgatewayIs() throws IOException {
        Map<String, Map<String, Object>> pushers = new LinkedHashMap<>();
        pushers.put("recount-backfill-nightly's driver", map(sparkApplication().get("driver")));
        pushers.put("recount-lake-compact's driver", map(compactionApplication().get("driver")));
        pushers.put("CronJob recount-reconcile", cronJobContainer());
        pushers.put("CronJob recount-correct", correctContainer());
        pushers.forEach((what, container) -> {
            Map<String, String> env = new LinkedHashMap<>();
            for (Object e : list(container.get("env"))) env.put(str(e, "name"), str(e, "value"));
            assertThat(env).as(what).containsEntry("RECOUNT_PUSHGATEWAY_URL", "http://pushgateway.monitoring.svc:9091");
        });
    }

    @Test
    void theStreamJobExportsPrometheusMetricsWhereTheScrapeConfigsLook() throws IOException {
        Map<String, Object> conf = map(at(flinkDeployment(), "spec", "flinkConfiguration"));
        assertThat(conf.get("metrics.reporter.prom.factory.class"))
                .isEqualTo("org.apache.flink.metrics.prometheus.PrometheusReporterFactory");
        assertThat(str(conf, "metrics.reporter.prom.port")).isEqualTo("9249");
        assertThat(str(flinkDeployment(), "spec", "podTemplate", "metadata", "annotations", "prometheus.io/port"))
                .isEqualTo("9249");

        Map<String, Object> compose = map(loadOne(MONITORING.resolve("prometheus.yml")));
        List<String> targets = new ArrayList<>();
        for (Object job : list(compose.get("scrape_configs"))) {
            for (Object sc : list(map(job).get("static_configs"))) targets.addAll(strings(map(sc).get("targets")));
        }
        assertThat(targets).contains("jobmanager:9249", "taskmanager:9249", "pushgateway:9091");
        for (Path p : List.of(MONITORING.resolve("prometheus.yml"), MONITORING.resolve("prometheus-k8s.yml"))) {
            Map<String, Object> prom = map(loadOne(p));
            assertThat(strings(prom.get("rule_files"))).as(p.toString()).containsExactly("/etc/prometheus/alerts.yml");
            for (Object job : list(prom.get("scrape_configs")))
                assertThat(str(job, "job_name")).isNotBlank();
        }
        assertThat(strings(map(map(composeFile().get("services")).get("prometheus"))
                        .get("volumes")))
                .contains(
                        "../monitoring/prometheus.yml:/etc/prometheus/prometheus.yml:ro",
                        "../monitoring/alerts.yml:/etc/prometheus/alerts.yml:ro");
    }

    @Test
    void alertRulesAreWellFormedUseRealMetricsAndLinkToARunbook() throws IOException {
        Map<String, Object> rules = map(loadOne(MONITORING.resolve("alerts.yml")));
        assertThat(rules.keySet()).containsExactly("groups");
        Set<String> anchors = markdownAnchors(ROOT.resolve("docs/operations.md"));
        // RecountNightlyJobFailed reads kube-state-metrics: for a cluster without a Pushgateway.
        KnownMetrics known = KnownMetrics.ofRepository(Set.of("kube_job_status_failed"));
        Set<String> names = new HashSet<>();
        Set<String> expressions = new HashSet<>();

        for (Object g : list(rules.get("groups"))) {
            Map<String, Object> group = map(g);
            assertThat(group.keySet())
                    .as("group keys")
                    .contains("name", "rules")
                    .isSubsetOf("name", "rules", "interval", "limit");
            assertThat(str(group, "name")).isNotBlank();
            for (Object r : list(group.get("rules"))) {
                Map<String, Object> rule = map(r);
                assertThat(rule.keySet())
                        .as("rule keys")
                        .contains("alert", "expr", "labels", "annotations")
                        .isSubsetOf("alert", "expr", "for", "keep_firing_for", "labels", "annotations");
                String alert = str(rule, "alert");
                assertThat(alert).matches("Recount[A-Z][A-Za-z]+");
                assertThat(names.add(alert))
                        .as("alert names are unique: " + alert)
                        .isTrue();
                String expr = str(rule, "expr");
                assertThat(expr).isNotBlank();
                assertThat(balanced(expr)).as("balanced brackets in " + alert).isTrue();
                expressions.add(expr);
                if (rule.containsKey("for")) assertThat(str(rule, "for")).matches("\\d+[smhdwy]");
                assertThat(str(rule, "labels", "severity")).isIn("critical", "warning");
                Map<String, Object> ann = map(rule.get("annotations"));
                assertThat(ann).containsKeys("summary", "description", "runbook_url");
                String anchor = alert.toLowerCase(Locale.ROOT);
                assertThat(str(ann, "runbook_url"))
                        .as("runbook link of " + alert)
                        .isEqualTo(RUNBOOK_DOCS + "/operations.md#" + anchor);
                assertThat(anchors)
                        .as("docs/operations.md has a section for " + alert)
                        .contains(anchor);

                known.check(expr, alert);
            }
        }
        // The five the issue asks for, by what they watch.
        assertThat(names)
                .contains(
                        "RecountWatermarkLagHigh",
                        "RecountPartitionIdleTooLong",
                        "RecountTooLateRateHigh",
                        "RecountDeadLetterRateHigh",
                        "RecountReconciliationBeyondTolerance");
        String all = String.join("\n", expressions);
        assertThat(all)
                .contains(
                        "watermarkLagMs",
                        "idlePartitions",
                        "tooLateEvents",
                        "reason_invalidEvents",
                        "recount_reconcile_days_beyond_tolerance");
    }

    /**
     * The alerts' runbook links start with the docs folder's address from Prometheus's external label recount_docs_url,
     * set once per Prometheus; without it, with the folder's path inside the repository.
     */
    static final String RUNBOOK_DOCS = "{{ with $externalLabels.recount_docs_url }}{{ . }}{{ else }}docs{{ end }}";

    @Test
    void runbookLinksTakeTheDocsAddressFromOnePlaceAndFallBackToTheRepositoryPath() throws IOException {
        Matcher fallback = Pattern.compile("\\{\\{ else }}([^{]+)\\{\\{ end }}").matcher(RUNBOOK_DOCS);
        assertThat(fallback.find()).isTrue();
        assertThat(ROOT.resolve(fallback.group(1)).resolve("operations.md"))
                .as("the fallback is a path in the repository")
                .isRegularFile();
        for (Path p : List.of(MONITORING.resolve("prometheus.yml"), MONITORING.resolve("prometheus-k8s.yml"))) {
            assertThat(str(loadOne(p), "global", "external_labels", "recount_docs_url"))
                    .as(p.toString())
                    .isEqualTo("${RECOUNT_DOCS_URL}");
        }
        // Compose: from .env, optional (an unset variable is the fallback, not an error).
        Map<String, Object> prometheus = map(map(composeFile().get("services")).get("prometheus"));
        assertThat(str(prometheus, "environment", "RECOUNT_DOCS_URL")).isEqualTo("${RECOUNT_DOCS_URL:-}");
        assertThat(properties(COMPOSE.resolve(".env.example")).stringPropertyNames())
                .contains("RECOUNT_DOCS_URL");
        // Prometheus 3 expands environment variables in external labels without a flag; 2.x would keep them literally.
        assertThat(str(prometheus, "image")).matches("prom/prometheus:v[3-9]\\.\\d+\\.\\d+");
    }

    @Test
    void everyAlertHasAPromtoolTestInWhichItFires() throws IOException {
        Map<String, Object> tests = map(loadOne(MONITORING.resolve("alerts-test.yml")));
        assertThat(strings(tests.get("rule_files"))).containsExactly("alerts.yml");
        Set<String> firing = new TreeSet<>();
        Set<String> silent = new TreeSet<>();
        for (Object group : list(tests.get("tests"))) {
            for (Object t : list(map(group).get("alert_rule_test"))) {
                (list(map(t).get("exp_alerts")).isEmpty() ? silent : firing).add(str(t, "alertname"));
            }
        }
        Set<String> alerts = new TreeSet<>();
        for (Object g : list(map(loadOne(MONITORING.resolve("alerts.yml"))).get("groups"))) {
            for (Object r : list(map(g).get("rules"))) alerts.add(str(r, "alert"));
        }
        assertThat(firing).as("alerts with a test in which they fire").isEqualTo(alerts);
        assertThat(alerts).as("tests name alerts that exist").containsAll(silent);
    }

    // ---- checks -----------------------------------------------------------------------------------------------------

    /**
     * A program's arguments: the leading words are subcommands (picocli {@code @Command(name = ...)} in the module of
     * the main class), every {@code --option} is declared in that module.
     */
    static void checkProgram(String mainClass, List<String> args, String where) throws IOException {
        assertThat(sourceOf(mainClass)).as(where + ": " + mainClass).isRegularFile();
        String module = moduleOf(mainClass);
        String sources = moduleSources(module);
        for (String word : leadingWords(args)) {
            assertThat(Pattern.compile("@Command\\(\\s*name\\s*=\\s*\"" + Pattern.quote(word) + "\"")
                            .matcher(sources)
                            .find())
                    .as("%s: subcommand '%s' exists in %s", where, word, module)
                    .isTrue();
        }
        for (String option : options(args)) {
            assertThat(sources)
                    .as("%s: option %s is declared in %s", where, option, module)
                    .contains("\"" + option + "\"");
        }
    }

    /** {@code recount <command> [args]} as the launcher dispatches it. */
    static void checkLauncher(List<String> invocation, String where) throws IOException {
        Map<String, String[]> dispatch = launcherDispatch();
        String command = invocation.get(0);
        assertThat(dispatch).as("%s: ./recount knows '%s'", where, command).containsKey(command);
        String[] target = dispatch.get(command);
        // target: {main class, "true" when the launcher passes the command word on}
        List<String> args = Boolean.parseBoolean(target[1]) ? invocation : invocation.subList(1, invocation.size());
        checkProgram(target[0], args, where + ": recount " + command);
    }

    static void checkConfigMounted(Map<String, Object> podSpec, String containerName, String where) {
        Map<String, Object> c = container(podSpec, containerName);
        String volume = mountedVolume(c, where);
        checkVolumeIsConfigMap(list(podSpec.get("volumes")), volume);
    }

    static String mountedVolume(Map<String, Object> container, String where) {
        String dir = CONFIG_PATH.substring(0, CONFIG_PATH.lastIndexOf('/'));
        for (Object m : list(container.get("volumeMounts"))) {
            if (dir.equals(str(m, "mountPath"))) return str(m, "name");
        }
        throw new AssertionError(where + " does not mount " + dir);
    }

    static void checkVolumeIsConfigMap(List<Object> volumes, String volume) {
        for (Object v : volumes) {
            if (volume.equals(str(v, "name"))) {
                assertThat(str(v, "configMap", "name")).isEqualTo(CONFIG_MAP);
                return;
            }
        }
        throw new AssertionError("no volume " + volume);
    }

    // ---- reading the build ------------------------------------------------------------------------------------------

    static Path repositoryRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null
                && !(Files.isRegularFile(p.resolve("recount"))
                        && Files.isRegularFile(p.resolve("config/recount.properties")))) {
            p = p.getParent();
        }
        if (p == null)
            throw new IllegalStateException(
                    "cannot find the repository root above " + Path.of("").toAbsolutePath());
        return p;
    }

    static String projectVersion() throws IOException {
        Matcher m = Pattern.compile("<artifactId>recount</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(ROOT.resolve("pom.xml")));
        assertThat(m.find()).isTrue();
        return m.group(1).trim();
    }

    static Map<String, String> rootPomProperties() throws IOException {
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        String props = pom.substring(pom.indexOf("<properties>"), pom.indexOf("</properties>"));
        Map<String, String> out = new HashMap<>();
        Matcher m = Pattern.compile("<([\\w.-]+)>([^<]*)</\\1>").matcher(props);
        while (m.find()) out.put(m.group(1), m.group(2).trim());
        return out;
    }

    /** Jars the poms produce, relative to the repository root: module jars and the two cluster jars. */
    static Set<String> producedJars() throws IOException {
        String version = projectVersion();
        Set<String> out = new TreeSet<>();
        for (String module :
                List.of("core", "db", "local-stack", "tools", "streaming-job", "batch-backfill", "reconciler")) {
            out.add(module + "/target/" + module + "-" + version + ".jar");
            String pom = Files.readString(ROOT.resolve(module).resolve("pom.xml"));
            Matcher classifier = Pattern.compile("<shadedClassifierName>([^<]+)</shadedClassifierName>")
                    .matcher(pom);
            if (classifier.find())
                out.add(module + "/target/" + module + "-" + version + "-" + classifier.group(1) + ".jar");
            Matcher file = Pattern.compile("<outputFile>([^<]+)</outputFile>").matcher(pom);
            while (file.find()) {
                out.add(file.group(1)
                        .replace("${project.build.directory}", module + "/target")
                        .replace("${project.version}", version));
            }
        }
        return out;
    }

    static String shadeMainClass(Path pom) throws IOException {
        Matcher m = Pattern.compile("<mainClass>([^<]+)</mainClass>").matcher(Files.readString(pom));
        assertThat(m.find()).as("shade mainClass in " + pom).isTrue();
        return m.group(1).trim();
    }

    static Path sourceOf(String className) {
        return ROOT.resolve(moduleOf(className))
                .resolve("src/main/java")
                .resolve(className.replace('.', '/') + ".java");
    }

    static String moduleOf(String className) {
        String pkg = className.split("\\.")[2];
        String module = MODULE_OF_PACKAGE.get(pkg);
        if (module == null)
            throw new AssertionError("no module for package dev.recount." + pkg + " (" + className + ")");
        return module;
    }

    static final Map<String, String> SOURCES = new HashMap<>();

    static String moduleSources(String module) throws IOException {
        if (!SOURCES.containsKey(module)) {
            try (Stream<Path> s = Files.walk(ROOT.resolve(module).resolve("src/main/java"))) {
                StringBuilder all = new StringBuilder();
                for (Path p :
                        s.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                    all.append(Files.readString(p)).append('\n');
                }
                SOURCES.put(module, all.toString());
            }
        }
        return SOURCES.get(module);
    }

    /** {@code ./recount}'s dispatch: command word → {main class, whether the word is passed on}. */
    static Map<String, String[]> launcherDispatch() throws IOException {
        String launcher = Files.readString(ROOT.resolve("recount"));
        Map<String, String[]> out = new HashMap<>();
        // The launcher's table: `  up|down) target=(local-stack dev.recount.stack.LocalStackMain "$cmd") ;;` (scripts
        // aside).
        Matcher m = Pattern.compile(
                        "(?m)^\\s+([\\w|-]+)\\)\\s*target=\\((?!script\\s)\\S+\\s+(\\S+)([^)\\n]*)\\)\\s*;;")
                .matcher(launcher);
        while (m.find()) {
            boolean passesWord = m.group(3).contains("\"$cmd\"");
            for (String word : m.group(1).split("\\|"))
                out.put(word, new String[] {m.group(2), String.valueOf(passesWord)});
        }
        assertThat(out).as("launcher dispatch").containsKeys("reconcile", "backfill", "stream");
        return out;
    }

    static List<String> leadingWords(List<String> args) {
        List<String> out = new ArrayList<>();
        for (String a : args) {
            if (a.startsWith("-") || a.startsWith("$")) break;
            out.add(a);
        }
        return out;
    }

    static List<String> options(List<String> args) {
        return args.stream()
                .filter(a -> a.startsWith("--"))
                .map(a -> a.contains("=") ? a.substring(0, a.indexOf('=')) : a)
                .collect(Collectors.toList());
    }

    /** An absolute path inside the recount image (/opt/recount/...) is the same path in the repository. */
    static Path imagePathToRepo(String path) {
        assertThat(path).startsWith("/opt/recount/");
        return ROOT.resolve(path.substring("/opt/recount/".length()));
    }

    // ---- reading the Dockerfile
    // ---------------------------------------------------------------------------------------

    static Set<String> dockerStages() throws IOException {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("(?im)^FROM\\s+\\S+\\s+AS\\s+(\\S+)").matcher(Files.readString(DOCKERFILE));
        while (m.find()) out.add(m.group(1));
        return out;
    }

    static Map<String, String> dockerArgs() throws IOException {
        Map<String, String> out = new HashMap<>();
        Matcher m = Pattern.compile("(?m)^ARG\\s+(\\w+)=(\\S+)").matcher(Files.readString(DOCKERFILE));
        while (m.find()) out.put(m.group(1), m.group(2));
        return out;
    }

    /** COPY destination file → source, for the COPY instructions that name one file. */
    static Map<String, String> dockerCopies(String dockerfile) {
        Map<String, String> out = new HashMap<>();
        Matcher m = Pattern.compile("(?m)^COPY\\s+(?:--\\S+\\s+)*(\\S+)\\s+(\\S+)\\s*$")
                .matcher(dockerfile);
        while (m.find()) out.put(m.group(2), m.group(1));
        return out;
    }

    // ---- reading the manifests
    // ------------------------------------------------------------------------------------------

    static List<Map<String, Object>> k8sObjects() throws IOException {
        Map<String, Object> k = map(loadOne(K8S.resolve("kustomization.yaml")));
        List<Map<String, Object>> out = new ArrayList<>();
        for (String r : strings(k.get("resources"))) {
            for (Object doc : loadAll(K8S.resolve(r))) out.add(map(doc));
        }
        return out;
    }

    /** The on-demand manifests (deploy/k8s/ondemand), created by hand, not by kustomize. */
    static List<Map<String, Object>> onDemandObjects() throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Path f : yamlFiles(K8S.resolve("ondemand"))) {
            for (Object doc : loadAll(f)) out.add(map(doc));
        }
        return out;
    }

    static List<Map<String, Object>> allK8sObjects() throws IOException {
        List<Map<String, Object>> out = new ArrayList<>(k8sObjects());
        out.addAll(onDemandObjects());
        return out;
    }

    static Map<String, Object> onDemand(String kind) throws IOException {
        for (Map<String, Object> o : onDemandObjects()) {
            if (kind.equals(o.get("kind"))) return o;
        }
        throw new AssertionError("no " + kind + " in deploy/k8s/ondemand");
    }

    static Map<String, Object> correctContainer() throws IOException {
        return container(
                map(at(k8sObject("CronJob", "recount-correct"), "spec", "jobTemplate", "spec", "template", "spec")),
                "correct");
    }

    static Map<String, Object> k8sObject(String kind, String name) throws IOException {
        for (Map<String, Object> o : k8sObjects()) {
            if (kind.equals(o.get("kind")) && name.equals(str(o, "metadata", "name"))) return o;
        }
        throw new AssertionError("no " + kind + " " + name + " in deploy/k8s");
    }

    static Map<String, Object> flinkDeployment() throws IOException {
        return k8sObject("FlinkDeployment", "recount-stream");
    }

    static Map<String, Object> sparkApplication() throws IOException {
        return map(at(k8sObject("ScheduledSparkApplication", "recount-backfill-nightly"), "spec", "template"));
    }

    static Map<String, Object> compactionApplication() throws IOException {
        return map(at(k8sObject("ScheduledSparkApplication", "recount-lake-compact"), "spec", "template"));
    }

    static Map<String, Object> cronJobContainer() throws IOException {
        return container(
                map(at(k8sObject("CronJob", "recount-reconcile"), "spec", "jobTemplate", "spec", "template", "spec")),
                "reconcile");
    }

    static Map<String, Object> composeFile() throws IOException {
        return map(loadOne(COMPOSE.resolve("docker-compose.yml")));
    }

    static Map<String, Object> container(Map<String, Object> podSpec, String name) {
        for (Object c : list(podSpec.get("containers"))) {
            if (name.equals(str(c, "name"))) return map(c);
        }
        throw new AssertionError("no container " + name);
    }

    static List<String> secretRefs(Map<String, Object> container) {
        List<String> out = new ArrayList<>();
        for (Object e : list(container.get("envFrom"))) {
            Object ref = map(e).get("secretRef");
            if (ref != null) out.add(str(ref, "name"));
        }
        return out;
    }

    /** Every string in the manifests (k8s objects, compose) and the Dockerfile's lines. */
    static List<String> allManifestStrings() throws IOException {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> o : allK8sObjects()) collectStrings(o, out);
        collectStrings(composeFile(), out);
        return out;
    }

    static List<Path> yamlFiles(Path... dirs) throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path dir : dirs) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
                        .sorted()
                        .forEach(out::add);
            }
        }
        return out;
    }

    static Set<String> markdownAnchors(Path md) throws IOException {
        Set<String> out = new HashSet<>();
        for (String line : Files.readAllLines(md, StandardCharsets.UTF_8)) {
            if (!line.startsWith("#")) continue;
            String title = line.replaceFirst("^#+\\s*", "").trim().toLowerCase(Locale.ROOT);
            // GitHub's rule: lower case, drop punctuation except '-' and '_', spaces become '-'.
            out.add(title.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
        }
        return out;
    }

    static Properties properties(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }

    static boolean balanced(String expr) {
        int round = 0;
        int square = 0;
        int curly = 0;
        boolean quoted = false;
        for (char ch : expr.toCharArray()) {
            if (ch == '"') quoted = !quoted;
            if (quoted) continue;
            switch (ch) {
                case '(' -> round++;
                case ')' -> round--;
                case '[' -> square++;
                case ']' -> square--;
                case '{' -> curly++;
                case '}' -> curly--;
                default -> {}
            }
            if (round < 0 || square < 0 || curly < 0) return false;
        }
        return round == 0 && square == 0 && curly == 0 && !quoted;
    }

    static String minor(String version) {
        String[] parts = version.split("\\.");
        return parts[0] + "." + parts[1];
    }

    // ---- YAML -------------------------------------------------------------------------------------------------------

    static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }

    static List<Object> loadAll(Path file) throws IOException {
        List<Object> out = new ArrayList<>();
        for (Object doc : yaml().loadAll(new StringReader(Files.readString(file)))) {
            if (doc != null) out.add(doc);
        }
        return out;
    }

    static Object loadOne(Path file) throws IOException {
        List<Object> docs = loadAll(file);
        assertThat(docs).as(file.toString()).hasSize(1);
        return docs.get(0);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        if (!(o instanceof Map)) throw new AssertionError("expected a mapping, got " + o);
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o) {
        if (o == null) return List.of();
        if (!(o instanceof List)) throw new AssertionError("expected a sequence, got " + o);
        return (List<Object>) o;
    }

    static List<String> strings(Object o) {
        return list(o).stream().map(String::valueOf).collect(Collectors.toList());
    }

    static Object at(Object node, String... path) {
        Object cur = node;
        for (String key : path) {
            cur = map(cur).get(key);
            if (cur == null) throw new AssertionError("missing " + String.join(".", path));
        }
        return cur;
    }

    static String str(Object node, String... path) {
        Object v = at(node, path);
        return String.valueOf(v);
    }

    static void collectValues(Object node, String key, Set<String> into) {
        if (node instanceof Map<?, ?> m) {
            m.forEach((k, v) -> {
                if (key.equals(k) && v instanceof String s) into.add(s);
                collectValues(v, key, into);
            });
        } else if (node instanceof List<?> l) {
            l.forEach(v -> collectValues(v, key, into));
        }
    }

    static void collectStrings(Object node, List<String> into) {
        if (node instanceof Map<?, ?> m) {
            m.values().forEach(v -> collectStrings(v, into));
        } else if (node instanceof List<?> l) {
            l.forEach(v -> collectStrings(v, into));
        } else if (node instanceof String s) {
            into.add(s);
        }
    }

    static void visitMaps(Object node, BiConsumer<Map<String, Object>, String> visitor) {
        visitMaps(node, "", visitor);
    }

    private static void visitMaps(Object node, String path, BiConsumer<Map<String, Object>, String> visitor) {
        if (node instanceof Map<?, ?> m) {
            visitor.accept(map(m), path);
            m.forEach((k, v) -> visitMaps(v, path + "." + k, visitor));
        } else if (node instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) visitMaps(l.get(i), path + "[" + i + "]", visitor);
        }
    }
}
