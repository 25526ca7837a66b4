package dev.recount.reconcile.testutils;

import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.db.Role;
import dev.recount.db.sets.SetTables;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A metric set's objects in a test schema, as the reconciler needs them: what {@code ./recount migrate} creates for a
 * set other than the default from its definition, written here only as far as the reconciler's tests need it (the
 * window tables, the partitioned corrections with their functions, the diffs, the log, the recorded windows and the
 * window writes with their triggers, the serving views, attribution when the set has it, the reconciler role's
 * grants), shaped like the default set's objects of migrations V2–V25. Also adds V26's {@code metric_sets} columns
 * to a schema migrated without them.
 *
 * <p>To be replaced by db's own DDL of a set ({@code SetSchema} and {@code Migrations.apply(..., MetricSets)}, V26)
 * once that is merged: then {@code LocalStack.createMigratedSchema(prefix, sets)} creates all of this.
 */
public final class SetObjects {
    private SetObjects() {}

    /** V26's columns: which sets a batch run computed and a reconciliation covered (NULL: the default set). */
    public static void addMetricSetsColumns(Connection admin) throws SQLException {
        try (Statement st = admin.createStatement()) {
            st.execute("ALTER TABLE batch_runs ADD COLUMN IF NOT EXISTS metric_sets text[]");
            st.execute("ALTER TABLE reconciliation_runs ADD COLUMN IF NOT EXISTS metric_sets text[]");
        }
    }

    /** Creates the objects of {@code set} (not the default set, whose objects the migrations made) in {@code schema}. */
    public static void create(Connection admin, String schema, MetricSet set) throws SQLException {
        if (set.isDefault()) throw new IllegalArgumentException("the default set's objects come from the migrations");
        try (Statement st = admin.createStatement()) {
            for (String ddl : ddl(schema, set)) st.execute(ddl);
        }
    }

    static List<String> ddl(String schema, MetricSet set) {
        SetTables t = new SetTables(set);
        String reconciler = Role.RECONCILER.roleName(schema);
        String dims =
                set.dimensionNames().stream().map(d -> d + " text NOT NULL").collect(Collectors.joining(", "));
        String key = t.keyColumns();
        String first = set.dimensionNames().get(0);
        String measures = set.measures().stream()
                .map(m -> m.name() + " " + type(m) + " NOT NULL CHECK (" + m.name() + " >= 0)")
                .collect(Collectors.joining(", "));
        String plainMeasures = set.measures().stream()
                .map(m -> m.name() + " " + type(m) + " NOT NULL")
                .collect(Collectors.joining(", "));
        String sides = set.measures().stream()
                .map(m -> "stream_" + m.name() + " " + type(m) + ", batch_" + m.name() + " " + type(m))
                .collect(Collectors.joining(", "));
        String batchSums = set.measures().stream()
                .map(m -> "batch_" + m.name() + " " + type(m))
                .collect(Collectors.joining(", "));
        List<String> s = new ArrayList<>();

        s.add("CREATE TABLE " + t.streamWindowMetrics() + " (window_start timestamptz NOT NULL, window_end timestamptz"
                + " NOT NULL, " + dims + ", " + measures + ", revision integer NOT NULL CHECK (revision >= 1),"
                + " updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (" + key + "),"
                + " CHECK (window_end > window_start))");
        s.add("CREATE TABLE " + t.batchWindowMetrics() + " (window_start timestamptz NOT NULL, window_end timestamptz"
                + " NOT NULL, " + dims + ", " + measures + ", run_id bigint NOT NULL, computed_at timestamptz NOT NULL"
                + " DEFAULT now(), PRIMARY KEY (" + key + "), CHECK (window_end > window_start))");
        s.add("CREATE UNLOGGED TABLE " + t.batchWindowMetricsStaging() + " (run_id bigint NOT NULL, window_start"
                + " timestamptz NOT NULL, window_end timestamptz NOT NULL, " + dims + ", " + plainMeasures + ")");
        s.add("CREATE TABLE " + t.reconciliationDiffs() + " (run_id bigint NOT NULL, window_start timestamptz NOT NULL,"
                + " window_end timestamptz NOT NULL, " + dims + ", status text NOT NULL CHECK (status IN ('match',"
                + " 'mismatch', 'missing_in_stream', 'missing_in_batch')), within_tolerance boolean NOT NULL,"
                + " stream_revision integer, " + sides + ", PRIMARY KEY (run_id, " + key + "))");

        // The finalized rows, partitioned by window_start as V19's, with V19/V20's functions for a first run's table.
        s.add("CREATE TABLE " + t.windowCorrections() + " (window_start timestamptz NOT NULL, window_end timestamptz"
                + " NOT NULL, " + dims + ", " + measures + ", removed boolean NOT NULL DEFAULT false,"
                + " reconciliation_run_id bigint NOT NULL, batch_run_id bigint, finalized_at timestamptz NOT NULL"
                + " DEFAULT now(), PRIMARY KEY (" + key + ")) PARTITION BY RANGE (window_start)");
        s.add("CREATE INDEX " + t.windowCorrections() + "_by_dim ON " + t.windowCorrections() + " (" + first
                + ", window_start)");
        s.add("CREATE TABLE " + t.windowCorrectionsPartitions() + " (partition_name text PRIMARY KEY, bounds tstzrange"
                + " NOT NULL CHECK (NOT isempty(bounds)), attached boolean NOT NULL DEFAULT false,"
                + " EXCLUDE USING gist (bounds WITH &&))");
        s.add("CREATE TABLE " + t.windowCorrectionsDefaultPartition() + " PARTITION OF " + t.windowCorrections()
                + " DEFAULT");
        s.add("CREATE TABLE " + t.windowCorrectionsWrites() + " (write_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY"
                + " KEY, operation text NOT NULL, written_by name NOT NULL DEFAULT session_user, written_at timestamptz"
                + " NOT NULL DEFAULT now())");
        String written = t.name("window_corrections_written");
        s.add("CREATE FUNCTION " + written + "() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path ="
                + " pg_catalog, pg_temp AS $$ BEGIN INSERT INTO " + schema + "." + t.windowCorrectionsWrites()
                + " (operation) VALUES (TG_OP); RETURN NULL; END $$");
        for (String table : List.of(t.windowCorrections(), t.windowCorrectionsDefaultPartition())) {
            s.add("CREATE TRIGGER " + written + " AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON " + table
                    + " FOR EACH STATEMENT EXECUTE FUNCTION " + written + "()");
        }
        s.addAll(partitionFunctions(schema, set, t, reconciler));

        s.add("CREATE TABLE " + t.correctionLog() + " (log_id bigserial PRIMARY KEY, reconciliation_run_id bigint NOT"
                + " NULL REFERENCES reconciliation_runs (run_id), window_start timestamptz NOT NULL, " + dims
                + ", metric text NOT NULL, before_value numeric(38,0), after_value numeric(38,0), reason text NOT NULL,"
                + " logged_at timestamptz NOT NULL DEFAULT now())");
        s.add("CREATE TRIGGER " + t.correctionLog() + "_no_update_delete BEFORE UPDATE OR DELETE ON "
                + t.correctionLog() + " FOR EACH ROW EXECUTE FUNCTION correction_log_is_append_only()");
        s.add("CREATE TRIGGER " + t.correctionLog() + "_no_truncate BEFORE TRUNCATE ON " + t.correctionLog()
                + " FOR EACH STATEMENT EXECUTE FUNCTION correction_log_is_append_only()");
        s.add("CREATE TABLE " + t.reconciledWindows() + " (window_start timestamptz PRIMARY KEY, stream_keys bigint NOT"
                + " NULL, stream_fingerprint bigint NOT NULL, batch_keys bigint NOT NULL, batch_fingerprint bigint NOT"
                + " NULL, final_keys bigint NOT NULL, final_fingerprint bigint NOT NULL, reconciliation_run_id bigint"
                + " NOT NULL REFERENCES reconciliation_runs (run_id), reconciled_at timestamptz NOT NULL DEFAULT now(),"
                + " fingerprint_version smallint NOT NULL DEFAULT 1, final_writes bigint, stream_min_window_end"
                + " timestamptz, stream_max_window_end timestamptz, batch_min_window_end timestamptz,"
                + " batch_max_window_end timestamptz, " + batchSums + ")");

        // V21: the windows written since they were last recorded, logged by triggers for any writer but the
        // committers (which log their windows themselves).
        s.add("CREATE TABLE " + t.windowWrites() + " (side text NOT NULL CHECK (side IN ('stream', 'batch')),"
                + " window_start timestamptz NOT NULL, written_at timestamptz NOT NULL DEFAULT now())");
        s.add("CREATE INDEX " + t.windowWrites() + "_window ON " + t.windowWrites() + " (window_start)");
        String rowsWritten = t.name("window_rows_written");
        String writes = schema + "." + t.windowWrites();
        s.add("CREATE FUNCTION " + rowsWritten + "() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path"
                + " = pg_catalog, pg_temp AS $$ BEGIN IF TG_OP = 'TRUNCATE' THEN INSERT INTO " + writes
                + " (side, window_start) SELECT TG_ARGV[0], window_start FROM " + schema + "." + t.reconciledWindows()
                + "; RETURN NULL; END IF; IF TG_OP = 'DELETE' THEN INSERT INTO " + writes + " (side, window_start)"
                + " VALUES (TG_ARGV[0], OLD.window_start); ELSE INSERT INTO " + writes + " (side, window_start) VALUES"
                + " (TG_ARGV[0], NEW.window_start); IF TG_OP = 'UPDATE' AND NEW.window_start IS DISTINCT FROM"
                + " OLD.window_start THEN INSERT INTO " + writes + " (side, window_start) VALUES (TG_ARGV[0],"
                + " OLD.window_start); END IF; END IF; RETURN NULL; END $$");
        for (String side : List.of("stream", "batch")) {
            String table = side.equals("stream") ? t.streamWindowMetrics() : t.batchWindowMetrics();
            s.add("CREATE TRIGGER " + table + "_written AFTER INSERT OR UPDATE OR DELETE ON " + table + " FOR EACH ROW"
                    + " WHEN (current_setting('recount.window_writes_logged', true) IS DISTINCT FROM 'on')"
                    + " EXECUTE FUNCTION " + rowsWritten + "('" + side + "')");
            s.add("CREATE TRIGGER " + table + "_truncated AFTER TRUNCATE ON " + table
                    + " FOR EACH STATEMENT EXECUTE FUNCTION " + rowsWritten + "('" + side + "')");
        }
        s.add(servingView(
                t.windowMetrics(),
                t.windowCorrections(),
                t.streamWindowMetrics(),
                t.batchWindowMetrics(),
                set.dimensionNames(),
                set.measureNames()));

        s.add("GRANT SELECT ON " + t.streamWindowMetrics() + ", " + t.batchWindowMetrics() + ", " + t.windowMetrics()
                + ", " + t.windowCorrectionsPartitions() + ", " + t.windowCorrectionsWrites() + " TO " + reconciler);
        s.add("GRANT SELECT, INSERT, UPDATE, DELETE ON " + t.reconciliationDiffs() + " TO " + reconciler);
        s.add("GRANT SELECT, INSERT, UPDATE ON " + t.windowCorrections() + ", " + t.reconciledWindows() + " TO "
                + reconciler);
        s.add("GRANT SELECT, INSERT ON " + t.correctionLog() + " TO " + reconciler);
        s.add("GRANT USAGE, SELECT ON SEQUENCE " + t.correctionLog() + "_log_id_seq TO " + reconciler);
        s.add("GRANT SELECT, DELETE ON " + t.windowWrites() + " TO " + reconciler);
        if (set.attribution()) s.addAll(attribution(t, set.dimensionNames(), dims, key, reconciler));
        return s;
    }

    private static String type(Measure m) {
        return m.isCount() ? "bigint" : "numeric(38,0)";
    }

    /** V13's attribution objects with the set's dimensions. */
    private static List<String> attribution(
            SetTables t, List<String> dimensions, String dims, String key, String reconciler) {
        String metrics = "attributed_clicks bigint NOT NULL CHECK (attributed_clicks >= 0), attributed_conversions"
                + " bigint NOT NULL CHECK (attributed_conversions >= 0), unattributed_clicks bigint NOT NULL CHECK"
                + " (unattributed_clicks >= 0), attributed_spend_micros numeric(38,0) NOT NULL CHECK"
                + " (attributed_spend_micros >= 0)";
        List<String> s = new ArrayList<>();
        s.add("CREATE TABLE " + t.streamAttributionMetrics() + " (window_start timestamptz NOT NULL, window_end"
                + " timestamptz NOT NULL, " + dims + ", " + metrics + ", revision integer NOT NULL CHECK (revision >="
                + " 1), updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (" + key + "))");
        s.add("CREATE TABLE " + t.batchAttributionMetrics() + " (window_start timestamptz NOT NULL, window_end"
                + " timestamptz NOT NULL, " + dims + ", " + metrics + ", run_id bigint NOT NULL, computed_at"
                + " timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (" + key + "))");
        s.add("CREATE UNLOGGED TABLE " + t.batchAttributionMetricsStaging() + " (run_id bigint NOT NULL, window_start"
                + " timestamptz NOT NULL, window_end timestamptz NOT NULL, " + dims + ", attributed_clicks bigint NOT"
                + " NULL, attributed_conversions bigint NOT NULL, unattributed_clicks bigint NOT NULL,"
                + " attributed_spend_micros numeric(38,0) NOT NULL)");
        s.add("CREATE TABLE " + t.attributionDiffs() + " (run_id bigint NOT NULL REFERENCES reconciliation_runs"
                + " (run_id), window_start timestamptz NOT NULL, window_end timestamptz NOT NULL, " + dims + ", status"
                + " text NOT NULL, within_tolerance boolean NOT NULL, stream_revision integer, stream_attributed_clicks"
                + " bigint, batch_attributed_clicks bigint, stream_attributed_conversions bigint,"
                + " batch_attributed_conversions bigint, stream_unattributed_clicks bigint, batch_unattributed_clicks"
                + " bigint, stream_attributed_spend_micros numeric(38,0), batch_attributed_spend_micros numeric(38,0),"
                + " PRIMARY KEY (run_id, " + key + "))");
        s.add("CREATE TABLE " + t.attributionCorrections() + " (window_start timestamptz NOT NULL, window_end"
                + " timestamptz NOT NULL, " + dims + ", " + metrics + ", removed boolean NOT NULL DEFAULT false,"
                + " reconciliation_run_id bigint NOT NULL, batch_run_id bigint, finalized_at timestamptz NOT NULL"
                + " DEFAULT now(), PRIMARY KEY (" + key + "))");
        s.add(servingView(
                t.name("attribution_metrics"),
                t.attributionCorrections(),
                t.streamAttributionMetrics(),
                t.batchAttributionMetrics(),
                dimensions,
                List.of(
                        "attributed_clicks",
                        "attributed_conversions",
                        "unattributed_clicks",
                        "attributed_spend_micros")));
        s.add("GRANT SELECT ON " + t.streamAttributionMetrics() + ", " + t.batchAttributionMetrics() + ", "
                + t.name("attribution_metrics") + " TO " + reconciler);
        s.add("GRANT SELECT, INSERT, UPDATE, DELETE ON " + t.attributionDiffs() + " TO " + reconciler);
        s.add("GRANT SELECT, INSERT, UPDATE ON " + t.attributionCorrections() + " TO " + reconciler);
        return s;
    }

    /** V5's union: finalized rows as final, else the stream's, else a batch row not reconciled yet. */
    private static String servingView(
            String view,
            String corrections,
            String stream,
            String batch,
            List<String> dimensions,
            List<String> measures) {
        String cols = "window_start, window_end, " + String.join(", ", dimensions) + ", " + String.join(", ", measures);
        String c = prefixed("c.", cols), s = prefixed("s.", cols), b = prefixed("b.", cols);
        String sameCs = "c.window_start = s.window_start"
                + dimensions.stream().map(d -> " AND c." + d + " = s." + d).collect(Collectors.joining());
        String sameCb = "c.window_start = b.window_start"
                + dimensions.stream().map(d -> " AND c." + d + " = b." + d).collect(Collectors.joining());
        String sameSb = "s.window_start = b.window_start"
                + dimensions.stream().map(d -> " AND s." + d + " = b." + d).collect(Collectors.joining());
        return "CREATE VIEW " + view + " AS SELECT " + c + ", 'batch'::text AS source, true AS is_final,"
                + " c.finalized_at AS updated_at FROM " + corrections + " c WHERE NOT c.removed UNION ALL SELECT " + s
                + ", 'stream'::text, false, s.updated_at FROM " + stream + " s WHERE NOT EXISTS (SELECT 1 FROM "
                + corrections + " c WHERE " + sameCs + ") UNION ALL SELECT " + b + ", 'batch'::text, false,"
                + " b.computed_at FROM " + batch + " b WHERE NOT EXISTS (SELECT 1 FROM " + corrections + " c WHERE "
                + sameCb + ") AND NOT EXISTS (SELECT 1 FROM " + stream + " s WHERE " + sameSb + ")";
    }

    private static String prefixed(String prefix, String columns) {
        return List.of(columns.split(", ")).stream().map(c -> prefix + c).collect(Collectors.joining(", "));
    }

    /** V19/V20's functions for a first run's table of its own, with the set's names, key and columns. */
    private static List<String> partitionFunctions(String schema, MetricSet set, SetTables t, String reconciler) {
        String wc = schema + "." + t.windowCorrections();
        String partitions = schema + "." + t.windowCorrectionsPartitions();
        String key = t.keyColumns();
        String first = set.dimensionNames().get(0);
        String newPartition = t.windowCorrectionsNewPartitionOfBatch();
        String index = t.name("window_corrections_index_partition");
        String attach = t.name("window_corrections_attach_partition");
        String merge = t.name("window_corrections_merge_partition");
        String written = schema + "." + t.name("window_corrections_written");
        String columns = "window_start, window_end, " + String.join(", ", set.dimensionNames()) + ", "
                + String.join(", ", set.measureNames());
        List<String> s = new ArrayList<>();
        s.add("CREATE FUNCTION " + newPartition + "(range_from timestamptz, range_to timestamptz, run_id bigint,"
                + " scope_from timestamptz, scope_to timestamptz, window_starts timestamptz[]) RETURNS text LANGUAGE"
                + " plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ DECLARE t text; constraints"
                + " text; BEGIN"
                + " IF range_from IS NULL OR range_to IS NULL OR range_to <= range_from THEN RAISE EXCEPTION"
                + " 'need range_from < range_to'; END IF;"
                + " IF run_id IS NULL OR scope_from < range_from OR scope_to > range_to OR scope_to <= scope_from THEN"
                + " RAISE EXCEPTION 'need a run and a scope within the range'; END IF;"
                + " LOCK TABLE " + partitions + " IN SHARE ROW EXCLUSIVE MODE;"
                + " IF EXISTS (SELECT 1 FROM " + partitions + " WHERE bounds && tstzrange(range_from, range_to))"
                + " OR EXISTS (SELECT 1 FROM " + wc + " WHERE window_start >= range_from AND window_start < range_to)"
                + " THEN RETURN NULL; END IF;"
                + " t := '" + t.windowCorrectionsPartitionPrefix() + "' || to_char(range_from AT TIME ZONE 'UTC',"
                + " 'YYYYMMDD\"t\"HH24MI') || '_' || to_char(range_to AT TIME ZONE 'UTC', 'YYYYMMDD\"t\"HH24MI');"
                + " EXECUTE format('CREATE TABLE " + schema + ".%I AS SELECT " + columns + ", false AS removed,"
                + " %s::bigint AS reconciliation_run_id, run_id AS batch_run_id, now() AS finalized_at FROM " + schema
                + "." + t.batchWindowMetrics() + " WHERE window_start >= %L AND window_start < %L AND"
                + " (%L::timestamptz[] IS NULL OR window_start = ANY (%L::timestamptz[]))', t, run_id, scope_from,"
                + " scope_to, window_starts, window_starts);"
                + " SELECT string_agg(c, ', ') INTO constraints FROM ("
                + " SELECT format('ALTER COLUMN %I SET NOT NULL', a.attname) AS c FROM pg_attribute a WHERE a.attrelid"
                + " = '" + wc + "'::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attnotnull UNION ALL"
                + " SELECT format('ALTER COLUMN %I SET DEFAULT %s', a.attname, pg_get_expr(d.adbin, d.adrelid)) FROM"
                + " pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid"
                + " = '" + wc + "'::regclass UNION ALL"
                + " SELECT format('ADD CONSTRAINT %I %s', conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE"
                + " conrelid = '" + wc + "'::regclass AND contype = 'c') parts;"
                + " EXECUTE format('ALTER TABLE " + schema + ".%I %s, ADD CONSTRAINT %I CHECK (window_start >= %L AND"
                + " window_start < %L)', t, constraints, t || '_bounds', range_from, range_to);"
                + " EXECUTE format('CREATE TRIGGER wc_written AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON " + schema
                + ".%I FOR EACH STATEMENT EXECUTE FUNCTION " + written + "()', t);"
                + " INSERT INTO " + schema + "." + t.windowCorrectionsWrites() + " (operation) VALUES ('INSERT');"
                + " EXECUTE format('GRANT SELECT, INSERT ON " + schema + ".%I TO " + reconciler + "', t);"
                + " INSERT INTO " + partitions
                + " (partition_name, bounds) VALUES (t, tstzrange(range_from, range_to));"
                + " RETURN t; END $$");
        s.add("CREATE FUNCTION " + index + "(partition_name text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET"
                + " search_path = pg_catalog, pg_temp AS $$ BEGIN"
                + " IF NOT EXISTS (SELECT 1 FROM " + partitions + " p WHERE p.partition_name = " + index
                + ".partition_name AND NOT p.attached) THEN RAISE EXCEPTION '% is no new partition', partition_name;"
                + " END IF;"
                + " EXECUTE format('ALTER TABLE " + schema + ".%I ADD CONSTRAINT %I PRIMARY KEY (" + key + ")',"
                + " partition_name, partition_name || '_pkey');"
                + " EXECUTE format('CREATE INDEX %I ON " + schema + ".%I (" + first + ", window_start)',"
                + " partition_name || '_by_dim', partition_name); END $$");
        s.add("CREATE FUNCTION " + attach + "(partition_name text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET"
                + " search_path = pg_catalog, pg_temp AS $$ DECLARE b tstzrange; BEGIN"
                + " SELECT p.bounds INTO b FROM " + partitions + " p WHERE p.partition_name = " + attach
                + ".partition_name AND NOT p.attached;"
                + " IF b IS NULL THEN RAISE EXCEPTION '% is no new partition', partition_name; END IF;"
                + " EXECUTE format('ALTER TABLE " + wc + " ATTACH PARTITION " + schema + ".%I FOR VALUES FROM (%L) TO"
                + " (%L)', partition_name, lower(b), upper(b));"
                + " EXECUTE format('REVOKE ALL ON " + schema + ".%I FROM " + reconciler + "', partition_name);"
                + " UPDATE " + partitions + " p SET attached = true WHERE p.partition_name = " + attach
                + ".partition_name; END $$");
        s.add("CREATE FUNCTION " + merge + "(partition_name text) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET"
                + " search_path = pg_catalog, pg_temp AS $$ DECLARE n bigint; BEGIN"
                + " IF NOT EXISTS (SELECT 1 FROM " + partitions + " p WHERE p.partition_name = " + merge
                + ".partition_name AND NOT p.attached) THEN RAISE EXCEPTION '% is no new partition', partition_name;"
                + " END IF;"
                + " EXECUTE format('INSERT INTO " + wc + " SELECT * FROM " + schema + ".%I', partition_name);"
                + " GET DIAGNOSTICS n = ROW_COUNT;"
                + " EXECUTE format('DROP TABLE " + schema + ".%I', partition_name);"
                + " DELETE FROM " + partitions + " p WHERE p.partition_name = " + merge + ".partition_name;"
                + " RETURN n; END $$");
        for (String f : List.of(
                newPartition + "(timestamptz, timestamptz, bigint, timestamptz, timestamptz, timestamptz[])",
                index + "(text)",
                attach + "(text)",
                merge + "(text)")) {
            s.add("REVOKE EXECUTE ON FUNCTION " + f + " FROM PUBLIC");
            s.add("GRANT EXECUTE ON FUNCTION " + f + " TO " + reconciler);
        }
        return s;
    }
}
