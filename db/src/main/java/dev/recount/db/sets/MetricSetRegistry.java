package dev.recount.db.sets;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.config.ConfigException;
import dev.recount.core.config.Durations;
import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.Filter;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.core.sets.Rollup;
import dev.recount.core.sets.Tolerance;
import dev.recount.db.Role;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The table {@code metric_sets} (V26): which metric sets a schema has objects for, under which definition. What
 * {@code ./recount migrate} does with the definitions ({@link #apply}), and what every component checks at start
 * ({@link #check}): a set's rows are only ever written into tables made for its dimensions and measures.
 *
 * <p>A set's {@link MetricSet#fingerprint() fingerprint} (its dimensions and measures) may not change under its name:
 * its stored rows mean them. Everything else (ratios, rollups, window, attribution, tolerance) may, and migrate
 * re-creates what depends on it.
 */
public final class MetricSetRegistry {
    /** The registry table (V26). */
    public static final String TABLE = "metric_sets";

    private static final ObjectMapper JSON = new ObjectMapper();

    private MetricSetRegistry() {}

    /** What {@link #apply} did to one set. */
    public enum Change {
        /** Declared for the first time: its objects were created (the default set's exist from the migrations). */
        CREATED,
        /** Declared as before, with a definition that changed in place (ratios, rollups, ...). */
        UPDATED,
        /** Declared exactly as before. */
        UNCHANGED,
        /** Declared again after it had been removed. */
        RESTORED,
        /** Registered, but no longer declared: marked removed, its objects kept. */
        REMOVED;

        public String word() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** What {@link #apply} did, set by set: the declared sets in the definitions' order, then the removed ones. */
    public record Outcome(Map<String, Change> changes) {
        public Outcome {
            changes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(changes));
        }

        /** For people: {@code created campaign_slot; unchanged default; removed old (its tables stay)}. */
        public String summary() {
            return changes.entrySet().stream()
                    .map(e -> e.getValue().word() + " " + e.getKey()
                            + (e.getValue() == Change.REMOVED ? " (its tables stay)" : ""))
                    .collect(Collectors.joining("; "));
        }
    }

    /** A row of the registry. */
    private record Registered(String fingerprint, OffsetDateTime removedAt) {}

    /**
     * Brings the registry, and the objects of every declared set, in line with {@code sets}, in one transaction on
     * {@code admin} (the schema's owner; committed here, rolled back on any failure, so that nothing is half done):
     *
     * <ul>
     *   <li>a set without a row: its objects are created ({@link SetSchema#create()}; the default set's are the
     *       migrations') and its row inserted;
     *   <li>a set whose row has its fingerprint: its objects are created again where missing, what may change in
     *       place (the serving view, the rollups) is dropped and created, and its row takes the definition;
     *   <li>a set whose row has another fingerprint: refused with a {@link ConfigException} before anything is written;
     *   <li>a row no set is declared for: marked removed; its objects and rows are kept.
     * </ul>
     *
     * @param schema the schema migrated (its Flyway migrations applied, V26 included)
     * @throws ConfigException when a set's dimensions or measures changed in place, or its column names collide
     */
    public static Outcome apply(Connection admin, String schema, MetricSets sets) throws SQLException {
        Objects.requireNonNull(sets, "sets");
        Role.STREAM.roleName(schema); // refuses a schema name that is no plain identifier
        boolean autoCommit = admin.getAutoCommit();
        admin.setAutoCommit(false);
        try {
            Outcome outcome = applyInTransaction(admin, schema, sets);
            admin.commit();
            return outcome;
        } catch (SQLException | RuntimeException e) {
            admin.rollback();
            throw e;
        } finally {
            admin.setAutoCommit(autoCommit);
        }
    }

    private static Outcome applyInTransaction(Connection admin, String schema, MetricSets sets) throws SQLException {
        try (Statement st = admin.createStatement()) {
            st.execute("SET LOCAL search_path TO " + schema);
            // Two migrates at once would both find a set new; the second waits and then sees the first's row.
            st.execute("LOCK TABLE " + TABLE + " IN SHARE ROW EXCLUSIVE MODE");
        }
        Map<String, Registered> registered = read(admin);
        // Everything that can be refused is refused before the first statement that writes.
        List<SetSchema> schemas = new ArrayList<>();
        for (MetricSet set : sets.sets()) {
            Registered r = registered.get(set.name());
            if (r != null && !r.fingerprint().equals(set.fingerprint())) {
                throw new ConfigException(inPlaceChange(set, r.fingerprint(), sets.source()));
            }
            if (!set.isDefault()) schemas.add(new SetSchema(set, schema));
        }
        for (SetSchema ddl : schemas) {
            if (!registered.containsKey(ddl.set().name())) requireNoForeignTables(admin, ddl);
        }

        Map<String, Change> changes = new LinkedHashMap<>();
        for (MetricSet set : sets.sets()) {
            if (!set.isDefault()) {
                SetSchema ddl = schemas.stream()
                        .filter(s -> s.set().equals(set))
                        .findFirst()
                        .orElseThrow();
                execute(admin, ddl.create());
            }
            changes.put(set.name(), record(admin, set, registered.get(set.name())));
        }
        for (Map.Entry<String, Registered> e : registered.entrySet()) {
            if (sets.set(e.getKey()).isEmpty() && e.getValue().removedAt() == null) {
                try (PreparedStatement ps =
                        admin.prepareStatement("UPDATE " + TABLE + " SET removed_at = now() WHERE name = ?")) {
                    ps.setString(1, e.getKey());
                    ps.executeUpdate();
                }
                changes.put(e.getKey(), Change.REMOVED);
            }
        }
        return new Outcome(changes);
    }

    /** Inserts or updates {@code set}'s row; what that was. */
    private static Change record(Connection admin, MetricSet set, Registered registered) throws SQLException {
        String definition = definition(set);
        if (registered == null) {
            try (PreparedStatement ps = admin.prepareStatement(
                    "INSERT INTO " + TABLE + " (name, fingerprint, definition) VALUES (?, ?, ?::jsonb)")) {
                ps.setString(1, set.name());
                ps.setString(2, set.fingerprint());
                ps.setString(3, definition);
                ps.executeUpdate();
            }
            return Change.CREATED;
        }
        // jsonb compares by value, whatever the key order or spacing.
        try (PreparedStatement ps = admin.prepareStatement("UPDATE " + TABLE
                + " SET definition = ?::jsonb, updated_at = now(), removed_at = NULL"
                + " WHERE name = ? AND (definition IS DISTINCT FROM ?::jsonb OR removed_at IS NOT NULL)")) {
            ps.setString(1, definition);
            ps.setString(2, set.name());
            ps.setString(3, definition);
            if (ps.executeUpdate() == 0) return Change.UNCHANGED;
        }
        return registered.removedAt() != null ? Change.RESTORED : Change.UPDATED;
    }

    /**
     * A set the registry does not know may still have tables (its row deleted by hand): they are taken as its own when
     * its stream table has the columns this definition gives it, and refused otherwise, rather than written with rows
     * of another meaning.
     */
    private static void requireNoForeignTables(Connection admin, SetSchema ddl) throws SQLException {
        String table = ddl.tables().streamWindowMetrics();
        List<String> columns = new ArrayList<>();
        try (PreparedStatement ps = admin.prepareStatement("SELECT a.attname FROM pg_attribute a"
                + " WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum")) {
            ps.setString(1, ddl.schema() + "." + table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) columns.add(rs.getString(1));
            }
        }
        if (!columns.isEmpty() && !columns.equals(ddl.streamWindowMetricsColumns())) {
            throw new ConfigException("metric set " + ddl.set().name() + " is not recorded in " + ddl.schema() + "."
                    + TABLE + ", but its table " + table + " exists with the columns " + columns + ", not "
                    + ddl.streamWindowMetricsColumns() + ": declare the set under another name, or drop "
                    + ddl.set().name() + "__* first");
        }
    }

    private static void execute(Connection admin, List<String> statements) throws SQLException {
        try (Statement st = admin.createStatement()) {
            for (String sql : statements) st.execute(sql);
        }
    }

    private static Map<String, Registered> read(Connection c) throws SQLException {
        Map<String, Registered> rows = new LinkedHashMap<>();
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT name, fingerprint, removed_at FROM " + TABLE + " ORDER BY created_at, name")) {
            while (rs.next()) {
                rows.put(rs.getString(1), new Registered(rs.getString(2), rs.getObject(3, OffsetDateTime.class)));
            }
        }
        return rows;
    }

    /**
     * What a component checks before it computes or serves {@code sets} (stream, backfill, reconcile), with its own
     * login (SELECT on {@value #TABLE}) on the connection's schema; reads only. Every set must be registered, not
     * removed, with its fingerprint. The default set's objects are the migrations', so a schema whose registry never
     * ran (migrated by Flyway alone) still serves it.
     *
     * @throws ConfigException naming every set that is not ready and what to run
     */
    public static void check(Connection c, MetricSets sets) throws SQLException {
        Map<String, Registered> registered;
        try {
            registered = read(c);
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) { // undefined_table: a schema before V26
                throw new ConfigException("schema " + c.getSchema() + " has no " + TABLE
                        + " table: it is older than this build; run ./recount migrate");
            }
            throw e;
        }
        List<String> problems = new ArrayList<>();
        for (MetricSet set : sets.sets()) {
            Registered r = registered.get(set.name());
            if (r == null) {
                if (!set.isDefault()) {
                    problems.add("metric set " + set.name() + " of " + sets.source() + " has no tables in schema "
                            + c.getSchema() + " yet: run ./recount migrate, which creates them");
                }
            } else if (!r.fingerprint().equals(set.fingerprint())) {
                problems.add(inPlaceChange(set, r.fingerprint(), sets.source()));
            } else if (r.removedAt() != null) {
                problems.add("metric set " + set.name() + " was removed from schema " + c.getSchema()
                        + "'s definitions by ./recount migrate at " + r.removedAt()
                        + " (its tables are kept): run ./recount migrate with " + sets.source()
                        + " to declare it again");
            }
        }
        if (!problems.isEmpty()) throw new ConfigException(String.join("; ", problems));
    }

    // ---- the definition, for people ------------------------------------------------------------------------------

    /**
     * The whole resolved definition of {@code set} as JSON, as {@value #TABLE}.definition holds it: dimensions,
     * measures (kind, field, where), ratios, window, rollups, attribution and every measure's tolerance.
     */
    public static String definition(MetricSet set) {
        ObjectNode n = JSON.createObjectNode();
        n.put("name", set.name());
        ArrayNode dims = n.putArray("dimensions");
        set.dimensionNames().forEach(dims::add);
        ArrayNode measures = n.putArray("measures");
        for (Measure m : set.measures()) {
            ObjectNode o = measures.addObject();
            o.put("name", m.name());
            o.put("kind", m.kind().word());
            if (m.field() != null) o.put("field", m.field().name());
            if (!m.filters().isEmpty()) {
                ObjectNode where = o.putObject("where");
                for (Filter f : m.filters()) {
                    ArrayNode values = where.putArray(f.field().name());
                    f.values().forEach(values::add);
                }
            }
        }
        ArrayNode ratios = n.putArray("ratios");
        for (DerivedRatio r : set.ratios()) {
            ObjectNode o = ratios.addObject();
            o.put("name", r.name());
            o.put("numerator", r.numerator());
            o.put("denominator", r.denominator());
            o.put("per", r.per());
        }
        n.put("window", Durations.format(set.window()));
        ArrayNode rollups = n.putArray("rollups");
        for (Rollup r : Rollup.values()) {
            if (set.rollups().contains(r)) rollups.add(r.word());
        }
        n.put("attribution", set.attribution());
        ObjectNode tolerance = n.putObject("tolerance");
        for (Map.Entry<String, Tolerance> t : set.tolerances().entrySet()) {
            ObjectNode o = tolerance.putObject(t.getKey());
            o.put("relative", t.getValue().relative());
            o.put("absolute", t.getValue().absolute());
        }
        return n.toString();
    }

    /**
     * One line: which set, what changed in its dimensions or measures (from the registered fingerprint to the
     * declared one), and the way to count the new definition without mixing it with the stored rows.
     */
    static String inPlaceChange(MetricSet set, String registeredFingerprint, String source) {
        JsonNode was = parse(registeredFingerprint);
        JsonNode now = parse(set.fingerprint());
        List<String> changes = new ArrayList<>();
        List<String> dimsWas = texts(was.path("dimensions"));
        List<String> dimsNow = texts(now.path("dimensions"));
        if (!dimsWas.equals(dimsNow)) changes.add("dimensions from " + dimsWas + " to " + dimsNow);
        Map<String, String> measuresWas = measures(was.path("measures"));
        Map<String, String> measuresNow = measures(now.path("measures"));
        Set<String> names = new LinkedHashSet<>(measuresWas.keySet());
        names.addAll(measuresNow.keySet());
        List<String> measureChanges = new ArrayList<>();
        for (String name : names) {
            String before = measuresWas.get(name);
            String after = measuresNow.get(name);
            if (before == null) {
                measureChanges.add("added " + name + " (" + after + ")");
            } else if (after == null) {
                measureChanges.add("removed " + name + " (" + before + ")");
            } else if (!before.equals(after)) {
                measureChanges.add(name + " from (" + before + ") to (" + after + ")");
            }
        }
        if (measureChanges.isEmpty() && !List.copyOf(measuresWas.keySet()).equals(List.copyOf(measuresNow.keySet()))) {
            // The same measures in another order: their columns' order is what would change.
            measureChanges.add("order from " + measuresWas.keySet() + " to " + measuresNow.keySet());
        }
        if (!measureChanges.isEmpty()) changes.add("measures: " + String.join(", ", measureChanges));
        if (changes.isEmpty()) changes.add("definition from " + registeredFingerprint + " to " + set.fingerprint());
        String name = set.name();
        return "metric set " + name + " cannot change in place: its " + String.join("; its ", changes)
                + ". Its tables hold rows of the registered definition. To count the new one, declare it as a new set"
                + " under another name, remove " + name + " from " + source + " (its tables stay), run ./recount"
                + " migrate, then ./recount backfill range --set <new name> --from ... --to ... for its history";
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("unreadable fingerprint in " + TABLE + ": " + json, e);
        }
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** name -> "count where event_type in [click]" / "sum of cost_micros", in the fingerprint's order. */
    private static Map<String, String> measures(JsonNode array) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode m : array) {
            StringBuilder d = new StringBuilder(m.path("kind").asText());
            if (m.hasNonNull("field")) d.append(" of ").append(m.get("field").asText());
            List<String> conditions = new ArrayList<>();
            m.path("where").fields().forEachRemaining(f -> conditions.add(f.getKey() + " in " + texts(f.getValue())));
            if (!conditions.isEmpty()) d.append(" where ").append(String.join(" and ", conditions));
            out.put(m.path("name").asText(), d.toString());
        }
        return out;
    }
}
