package dev.recount.core.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;

/**
 * recount's settings: the documented defaults in {@code config/recount.properties}, then an optional
 * config file, then a few environment variables (what {@code .recount/local.env} exports), then flags.
 *
 * <p>Unknown keys are rejected rather than ignored, so a typo in a config file cannot silently leave a
 * default in force. Passwords are never read from the file or flags, only from the environment or a file: see
 * {@link #adminPassword()} and {@link #passwordSource(Component)}.
 */
public final class RecountConfig {
    static final String DEFAULTS_RESOURCE = "/dev/recount/core/config/recount.properties";

    /** Environment variables that override a setting (.recount/local.env exports some; Secrets set the others). */
    static final Map<String, String> ENV_OVERRIDES = Map.of(
            "KAFKA_BOOTSTRAP_SERVERS",
            "kafka.bootstrap-servers",
            "RECOUNT_JDBC_URL",
            "postgres.jdbc-url",
            "PGUSER",
            "postgres.user",
            Component.STREAM.userVariable(),
            "postgres.stream.user",
            Component.BATCH.userVariable(),
            "postgres.batch.user",
            Component.RECONCILER.userVariable(),
            "postgres.reconciler.user",
            "RECOUNT_PGPASSWORD_DIR",
            "postgres.password-dir");

    private final Map<String, String> values;
    private final Map<String, String> environment;

    private RecountConfig(Map<String, String> values, Map<String, String> environment) {
        this.values = values;
        this.environment = environment;
    }

    /** Defaults only, ignoring the environment: for tests and for printing the reference. */
    public static RecountConfig defaults() {
        return new RecountConfig(loadDefaults(), Map.of());
    }

    /**
     * Defaults, then {@code configFile} (may be null), then the environment's overrides.
     *
     * @throws IllegalArgumentException naming the file and key when the file has an unknown key
     */
    public static RecountConfig load(Path configFile, Map<String, String> environment) {
        Map<String, String> values = loadDefaults();
        if (configFile != null) {
            Properties file = new Properties();
            try (Reader in = Files.newBufferedReader(configFile, StandardCharsets.UTF_8)) {
                file.load(in);
            } catch (IOException e) {
                throw new ConfigException("cannot read config file " + configFile + ": " + e.getMessage(), e);
            }
            for (String key : file.stringPropertyNames()) {
                requireKnown(values, key, "config file " + configFile);
                values.put(key, file.getProperty(key).trim());
            }
        }
        ENV_OVERRIDES.forEach((env, key) -> {
            String v = environment.get(env);
            if (v != null && !v.isBlank()) values.put(key, v.trim());
        });
        return new RecountConfig(values, Map.copyOf(environment));
    }

    /** The config file named by $RECOUNT_CONFIG, if set, merged with the process environment. */
    public static RecountConfig fromEnvironment(Path explicitFile) {
        Map<String, String> env = System.getenv();
        Path file = explicitFile;
        if (file == null
                && env.get("RECOUNT_CONFIG") != null
                && !env.get("RECOUNT_CONFIG").isBlank()) {
            file = Path.of(env.get("RECOUNT_CONFIG"));
        }
        return load(file, env);
    }

    /** A copy with {@code key} set, as a command-line flag does. Null values leave the setting as it is. */
    public RecountConfig with(String key, String value) {
        if (value == null) return this;
        Map<String, String> copy = new TreeMap<>(values);
        requireKnown(copy, key, "flag");
        copy.put(key, value.trim());
        return new RecountConfig(copy, environment);
    }

    public String get(String key) {
        String v = values.get(key);
        if (v == null) throw new ConfigException("unknown setting '" + key + "'");
        return v;
    }

    public Duration duration(String key) {
        try {
            return Durations.parse(get(key));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("setting " + key + ": " + e.getMessage(), e);
        }
    }

    public int integer(String key) {
        try {
            return Integer.parseInt(get(key));
        } catch (NumberFormatException e) {
            throw new ConfigException("setting " + key + " must be an integer, got '" + get(key) + "'", e);
        }
    }

    public long longInteger(String key) {
        try {
            return Long.parseLong(get(key));
        } catch (NumberFormatException e) {
            throw new ConfigException("setting " + key + " must be an integer, got '" + get(key) + "'", e);
        }
    }

    public double decimal(String key) {
        try {
            return Double.parseDouble(get(key));
        } catch (NumberFormatException e) {
            throw new ConfigException("setting " + key + " must be a number, got '" + get(key) + "'", e);
        }
    }

    public ZoneId timeZone() {
        try {
            return ZoneId.of(get("time-zone"));
        } catch (RuntimeException e) {
            throw new ConfigException("setting time-zone: unknown zone '" + get("time-zone") + "'", e);
        }
    }

    /** The event-time settings that stream and batch must agree on. */
    public EventTimeSettings eventTime() {
        String horizon = get("dedup.horizon");
        Duration window = duration("window.size");
        Duration ooo = duration("watermark.out-of-orderness");
        Duration lateness = duration("window.allowed-lateness");
        return new EventTimeSettings(
                window,
                ooo,
                lateness,
                duration("watermark.idleness"),
                horizon.isBlank() ? window.plus(ooo).plus(lateness) : duration("dedup.horizon"),
                validation());
    }

    /** Which records are valid (CONTRACT §1): the event-time range around the record timestamp, the cost ceiling. */
    public ValidationSettings validation() {
        long maxCost = longInteger("validation.max-cost-micros");
        if (maxCost < 0) {
            throw new ConfigException("setting validation.max-cost-micros must not be negative, got " + maxCost);
        }
        return new ValidationSettings(duration("validation.max-past"), duration("validation.max-future"), maxCost);
    }

    /** Impression–click attribution: {@code attribution.enabled} and {@code attribution.window}. */
    public AttributionSettings attribution() {
        String enabled = get("attribution.enabled");
        if (!enabled.equals("true") && !enabled.equals("false")) {
            throw new IllegalArgumentException(
                    "setting attribution.enabled must be true or false, got '" + enabled + "'");
        }
        try {
            return new AttributionSettings(Boolean.parseBoolean(enabled), duration("attribution.window"));
        } catch (IllegalArgumentException e) {
            if (e.getMessage().startsWith("setting ")) throw e;
            throw new IllegalArgumentException("setting attribution.window: " + e.getMessage(), e);
        }
    }

    public Topics topics() {
        String input = get("topics.input");
        String deadLetter = get("topics.dead-letter");
        String backfill = get("topics.backfill");
        // The job reads its own output back if two of them are one topic: a dead letter is no event, so it would be
        // a dead letter again, once per checkpoint, forever; too-late events would be counted again.
        if (input.equals(deadLetter) || input.equals(backfill) || deadLetter.equals(backfill)) {
            throw new IllegalArgumentException("settings topics.input, topics.dead-letter and topics.backfill must name"
                    + " three different topics, got '" + input + "', '" + deadLetter + "', '" + backfill + "'");
        }
        return new Topics(input, deadLetter, backfill, integer("topics.input-partitions"));
    }

    /**
     * The administrative login ({@code postgres.user}): {@code ./recount up} and the migrations use it, to create
     * schemas and roles. No component does: each has its own login, {@link #postgres(Component)}.
     */
    public PostgresSettings adminPostgres() {
        return new PostgresSettings(
                get("postgres.jdbc-url"), get("postgres.user"), get("postgres.schema"), integer("postgres.pool-size"));
    }

    /**
     * The administrative password: from the environment variable named by {@code postgres.password-env}, else the
     * first line of {@code postgres.password-file}, else null (trust or peer auth).
     */
    public String adminPassword() {
        return new PasswordSource(get("postgres.password-env"), get("postgres.password-file")).resolve(environment);
    }

    /**
     * Where {@code component} connects, as its own LOGIN role: {@code postgres.<component>.user}, by default
     * {@code <schema>_<component>_login} (a member of the schema's group role {@code <schema>_<component>_role}).
     */
    public PostgresSettings postgres(Component component) {
        PostgresSettings admin = adminPostgres();
        return new PostgresSettings(admin.jdbcUrl(), user(component), admin.schema(), admin.poolSize());
    }

    /**
     * Where {@code component}'s password comes from, unresolved (so a Flink job can resolve it where it runs): the
     * variable named by {@code postgres.<component>.password-env}, else {@code postgres.<component>.password-file},
     * else {@code <postgres.password-dir>/<user>.password} when that directory is set.
     */
    public PasswordSource passwordSource(Component component) {
        String prefix = "postgres." + component.key() + ".";
        String file = get(prefix + "password-file");
        String dir = get("postgres.password-dir");
        if (file.isBlank() && !dir.isBlank())
            file = Path.of(dir, user(component) + ".password").toString();
        return new PasswordSource(get(prefix + "password-env"), file);
    }

    /** {@code component}'s password, resolved now against this configuration's environment. */
    public String password(Component component) {
        try {
            return passwordSource(component).resolve(environment);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "password of the " + component.key() + " login " + user(component) + ": " + e.getMessage(), e);
        }
    }

    private String user(Component component) {
        String user = get("postgres." + component.key() + ".user");
        return user.isBlank() ? component.defaultUser(adminPostgres().schema()) : user;
    }

    /** Environment variable to the setting it overrides (docs/contract.md lists them with the settings). */
    public static Map<String, String> environmentOverrides() {
        return new TreeMap<>(ENV_OVERRIDES);
    }

    /** Every setting, sorted, for `--help` style listings and diagnostics. Passwords are never in here. */
    public Map<String, String> asMap() {
        return new TreeMap<>(values);
    }

    private static void requireKnown(Map<String, String> known, String key, String where) {
        if (!known.containsKey(key)) {
            throw new ConfigException(
                    "unknown setting '" + key + "' in " + where + " (see config/recount.properties for every setting)");
        }
    }

    private static Map<String, String> loadDefaults() {
        Properties p = new Properties();
        try (InputStream in = RecountConfig.class.getResourceAsStream(DEFAULTS_RESOURCE)) {
            Objects.requireNonNull(in, "defaults resource missing from the build: " + DEFAULTS_RESOURCE);
            p.load(new java.io.InputStreamReader(in, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read built-in defaults", e);
        }
        Map<String, String> values = new TreeMap<>();
        p.stringPropertyNames().forEach(k -> values.put(k, p.getProperty(k).trim()));
        return values;
    }
}
