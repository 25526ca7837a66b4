package dev.recount.db;

import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The shape of one metric set's objects as PostgreSQL's catalog holds them: per table, view, composite type and
 * function, its columns, constraints, indexes, triggers (with their functions' bodies), partitioning and privileges,
 * keyed by the object's name in the default set and written without the set's prefix, so that two sets declared alike
 * describe alike. Names PostgreSQL chose itself (constraints, the indexes of partitions) and the names of indexes are
 * left out: a set's first-dimension index is named {@code _by_dim}, the default's {@code _campaign}.
 */
final class CatalogShape {
    /** The relations every set shares: runs, settings, the stream's own logs, the registry. */
    static final Set<String> SHARED_RELATIONS = Set.of(
            "flyway_schema_history",
            "stream_progress",
            "batch_runs",
            "reconciliation_runs",
            "serving_settings",
            "stream_rejected_rows",
            "lake_archived_rows",
            "backfill_waiting",
            "metric_sets");

    /** The functions every set shares: V12's ratio rules and calendar, V23's version. */
    static final Set<String> SHARED_FUNCTIONS = Set.of(
            "exact_ratio",
            "ctr",
            "cvr",
            "cpc_micros",
            "cpm_micros",
            "cost_per_conversion_micros",
            "period_end",
            "local_midnight",
            "schema_version");

    private final Connection c;
    private final String schema;
    private final SetTables tables;
    private final String prefix;

    private CatalogShape(Connection c, String schema, SetTables tables) {
        this.c = c;
        this.schema = schema;
        this.tables = tables;
        this.prefix = tables.name("");
    }

    /** Every object of {@code tables}' set in {@code schema}: its default-set name → its shape, one fact a line. */
    static Map<String, String> of(Connection c, String schema, SetTables tables) throws SQLException {
        return new CatalogShape(c, schema, tables).describe();
    }

    /** Only the privileges of each object (what each role may do with it). */
    static Map<String, String> privileges(Connection c, String schema, SetTables tables) throws SQLException {
        Map<String, String> out = new TreeMap<>();
        of(c, schema, tables)
                .forEach((name, shape) -> out.put(
                        name, shape.lines().filter(l -> l.contains("grant ")).collect(Collectors.joining("\n"))));
        return out;
    }

    /** The default-set name of {@code name}, when it is an object of this set; null otherwise. */
    String baseName(String name) {
        String base;
        if (prefix.isEmpty()) {
            if (name.contains("__")) return null; // another set's
            base = name;
        } else {
            if (!name.startsWith(prefix)) return null;
            base = name.substring(prefix.length());
            String partitions = tables.windowCorrectionsPartitionPrefix().substring(prefix.length());
            if (tables.windowCorrectionsNewPartitionOfBatch().equals(name)) {
                base = "window_corrections_new_partition_of_batch";
            } else if (base.startsWith(partitions) && base.matches(partitions + "[0-9]{8}t.*")) {
                base = "window_corrections_" + base.substring(partitions.length());
            }
        }
        return base;
    }

    private Map<String, String> describe() throws SQLException {
        Map<String, String> out = new TreeMap<>();
        for (String[] rel : rows(
                "SELECT c.oid::text, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                        + " WHERE n.nspname = ? AND c.relkind IN ('r', 'p', 'v', 'c')",
                schema)) {
            String base = baseName(rel[1]);
            if (base == null || SHARED_RELATIONS.contains(base)) continue;
            out.put(base, String.join("\n", relation(rel[0])));
        }
        for (String[] fn : rows(
                "SELECT p.oid::text, p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                        + " WHERE n.nspname = ?",
                schema)) {
            String base = baseName(fn[1]);
            if (base == null || SHARED_FUNCTIONS.contains(base)) continue;
            out.put(base + "()", String.join("\n", function(fn[0])));
        }
        return out;
    }

    private List<String> relation(String oid) throws SQLException {
        List<String> lines = new ArrayList<>();
        for (String[] r : rows(
                "SELECT c.relkind::text, c.relpersistence::text, coalesce(pg_get_partkeydef(c.oid), ''),"
                        + " coalesce(pg_get_expr(c.relpartbound, c.oid), ''), coalesce(parent.relname, '')"
                        + " FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid"
                        + " LEFT JOIN pg_class parent ON parent.oid = i.inhparent WHERE c.oid = ?::oid",
                oid)) {
            lines.add("kind " + r[0] + " persistence " + r[1] + " partitioned " + r[2] + " partition of "
                    + baseOrEmpty(r[4]) + " " + r[3]);
        }
        for (String[] a : rows(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull::text, a.attidentity::text,"
                        + " coalesce(pg_get_expr(d.adbin, d.adrelid), ''),"
                        + " coalesce(pg_get_serial_sequence(a.attrelid::regclass::text, a.attname), '')"
                        + " FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
                        + " WHERE a.attrelid = ?::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                oid)) {
            lines.add("column " + a[0] + " " + a[1] + (a[2].equals("true") ? " not null" : "")
                    + (a[3].isEmpty() ? "" : " identity " + a[3]) + (a[4].isEmpty() ? "" : " default " + norm(a[4])));
            if (!a[5].isEmpty()) {
                for (String[] g : rows(
                        "SELECT coalesce(r.rolname, 'PUBLIC'), a.privilege_type FROM pg_class s"
                                + " CROSS JOIN LATERAL aclexplode(s.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee"
                                + " WHERE s.oid = ?::regclass AND a.grantee <> s.relowner",
                        a[5])) {
                    lines.add("sequence of " + a[0] + " grant " + g[0] + " " + g[1]);
                }
            }
        }
        List<String> sorted = new ArrayList<>();
        for (String[] k : rows(
                "SELECT contype::text, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = ?::oid", oid)) {
            sorted.add("constraint " + k[0] + " " + norm(k[1]));
        }
        for (String[] i : rows("SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = ?::oid", oid)) {
            sorted.add("index " + norm(i[0]).replaceFirst("INDEX \\S+ ON \\S+", "INDEX ON"));
        }
        for (String[] t : rows(
                "SELECT pg_get_triggerdef(t.oid), p.prosrc FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid"
                        + " WHERE t.tgrelid = ?::oid AND NOT t.tgisinternal",
                oid)) {
            // Without the table's name, which is the key (a partition's differs beyond the prefix).
            sorted.add("trigger " + norm(t[0]).replaceFirst(" ON \\S+ ", " ON ") + " running " + norm(t[1]));
        }
        for (String[] g : rows(
                "SELECT coalesce(r.rolname, 'PUBLIC'), a.privilege_type FROM pg_class cl"
                        + " CROSS JOIN LATERAL aclexplode(cl.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee"
                        + " WHERE cl.oid = ?::oid AND a.grantee <> cl.relowner",
                oid)) {
            sorted.add("grant " + g[0] + " " + g[1]);
        }
        for (String[] g : rows(
                "SELECT at.attname, coalesce(r.rolname, 'PUBLIC'), a.privilege_type FROM pg_attribute at"
                        + " CROSS JOIN LATERAL aclexplode(at.attacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee"
                        + " WHERE at.attrelid = ?::oid",
                oid)) {
            sorted.add("column " + g[0] + " grant " + g[1] + " " + g[2]);
        }
        Collections.sort(sorted);
        lines.addAll(sorted);
        return lines;
    }

    private List<String> function(String oid) throws SQLException {
        List<String> lines = new ArrayList<>();
        for (String[] f : rows(
                "SELECT pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), l.lanname,"
                        + " p.provolatile::text, p.proparallel::text, p.prosecdef::text,"
                        + " coalesce(array_to_string(p.proconfig, ';'), ''), (p.prorettype = 'trigger'::regtype)::text,"
                        + " p.prosrc FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = ?::oid",
                oid)) {
            lines.add("arguments " + norm(f[0]));
            lines.add("result " + norm(f[1]));
            lines.add("language " + f[2] + " volatility " + f[3] + " parallel " + f[4] + " security definer " + f[5]
                    + " config " + f[6]);
            // A trigger function's body is the same text for every set; the others differ by design (a set's ratios
            // are exact_ratio of its measures, its reconciled ranges count its own runs), and are compared by what
            // they return in SetSchemaDriftITCase.
            if (f[7].equals("true")) lines.add("body " + norm(f[8]));
        }
        List<String> grants = new ArrayList<>();
        for (String[] g : rows(
                "SELECT coalesce(r.rolname, 'PUBLIC'), a.privilege_type FROM pg_proc p"
                        + " CROSS JOIN LATERAL aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a"
                        + " LEFT JOIN pg_roles r ON r.oid = a.grantee WHERE p.oid = ?::oid AND a.grantee <> p.proowner",
                oid)) {
            grants.add("grant " + g[0] + " " + g[1]);
        }
        Collections.sort(grants);
        lines.addAll(grants);
        return lines;
    }

    private String baseOrEmpty(String name) {
        String base = name.isEmpty() ? null : baseName(name);
        return base == null ? "" : base;
    }

    /** Without the schema and the set's prefix, whitespace collapsed. */
    private String norm(String text) {
        String t = text.replace(schema + ".", "");
        if (!prefix.isEmpty()) t = t.replace(prefix, "");
        return t.replaceAll("\\s+", " ").trim();
    }

    private List<String[]> rows(String sql, String parameter) throws SQLException {
        List<String[]> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, parameter);
            try (ResultSet rs = ps.executeQuery()) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    String[] row = new String[n];
                    for (int i = 0; i < n; i++) row[i] = rs.getString(i + 1);
                    out.add(row);
                }
            }
        }
        return out;
    }
}
