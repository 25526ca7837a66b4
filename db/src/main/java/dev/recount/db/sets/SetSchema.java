package dev.recount.db.sets;

import dev.recount.core.attribution.AttributionMetrics;
import dev.recount.core.config.ConfigException;
import dev.recount.core.sets.DerivedRatio;
import dev.recount.core.sets.Measure;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.Rollup;
import dev.recount.db.Role;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The DDL of one metric set's objects other than the default set's: the same tables, indexes, triggers, functions,
 * views and grants that migrations V2-V26 leave for the default set, with the set's dimensions in place of
 * {@code (campaign_id, channel_id)}, its measures in place of the five metrics and its ratios in place of the five
 * ratios, named by {@link SetTables}. {@code SetSchemaDriftITCase} holds the two equal: a set declared exactly as the
 * default must get objects of exactly the default's shape.
 *
 * <p>Every statement can run again: tables, indexes, triggers and functions are created {@code IF NOT EXISTS} or
 * {@code OR REPLACE}, grants repeat harmlessly. What may change in place (the serving view's ratio columns, the
 * rollups) is dropped and created again ({@link #dropServing()}, {@link #createServing()}); nothing that holds rows is
 * ever dropped. {@link MetricSetRegistry} decides when to run what.
 *
 * <p>Names from the definitions (set, dimensions, measures, ratios) are strict identifiers (core's
 * {@code Identifiers}), so they are written unquoted; nothing else from a definition (a filter's values) reaches DDL.
 */
public final class SetSchema {
    /** reconciled_windows' own {@code batch_*} columns, next to which the set's {@code batch_<measure>} columns go. */
    private static final List<String> RECONCILED_WINDOWS_BATCH_COLUMNS =
            List.of("batch_keys", "batch_fingerprint", "batch_min_window_end", "batch_max_window_end");

    private static final Pattern PLACEHOLDER = Pattern.compile("\\{([a-z_]+)}");

    private final MetricSet set;
    private final SetTables tables;
    private final String schema;
    private final Map<String, String> names = new HashMap<>();

    /**
     * @param schema the schema the objects go into: the SECURITY DEFINER functions name their tables with it (they run
     *               with an empty search_path), and the group roles are {@code <schema>_<role>_role}
     * @throws ConfigException when a column of the set would collide with one its tables have already
     */
    public SetSchema(MetricSet set, String schema) {
        this.set = Objects.requireNonNull(set, "set");
        if (set.isDefault()) {
            throw new IllegalArgumentException("the default set's objects are the migrations' (V2-V26), not generated");
        }
        this.tables = new SetTables(set);
        Role.STREAM.roleName(schema); // refuses a schema name that is no plain identifier
        this.schema = schema;
        checkColumns();
        names.put("schema", schema);
        for (Role role : Role.values()) names.put(role.key() + "_role", role.roleName(schema));
        names.put("stream", tables.streamWindowMetrics());
        names.put("batch", tables.batchWindowMetrics());
        names.put("staging", tables.batchWindowMetricsStaging());
        names.put("wc", tables.windowCorrections());
        names.put("wc_default", tables.windowCorrectionsDefaultPartition());
        names.put("wc_partitions", tables.windowCorrectionsPartitions());
        names.put("wc_writes", tables.windowCorrectionsWrites());
        names.put("wc_written", tables.windowCorrectionsWritten());
        names.put("wc_new_partition", tables.windowCorrectionsNewPartitionOfBatch());
        names.put("wc_index_partition", tables.windowCorrectionsIndexPartition());
        names.put("wc_attach_partition", tables.windowCorrectionsAttachPartition());
        names.put("wc_merge_partition", tables.windowCorrectionsMergePartition());
        names.put("partition_prefix", tables.windowCorrectionsPartitionPrefix());
        names.put("by_dim", tables.firstDimensionIndexSuffix());
        names.put("diffs", tables.reconciliationDiffs());
        names.put("log", tables.correctionLog());
        names.put("log_seq", tables.correctionLogSequence());
        names.put("log_append_only", tables.correctionLogIsAppendOnly());
        names.put("rw", tables.reconciledWindows());
        names.put("ww", tables.windowWrites());
        names.put("rows_written", tables.windowRowsWritten());
        names.put("reconciled_ranges", tables.reconciledRanges());
        names.put("wm", tables.windowMetrics());
        names.put("row_type", tables.periodMetricsRow());
        names.put("period_metrics", tables.periodMetrics());
        names.put("hourly", tables.hourlyMetrics());
        names.put("daily", tables.dailyMetrics());
        names.put("sliding", tables.slidingMetrics());
        names.put("recent_sliding", tables.recentSlidingMetrics());
        names.put("stream_attr", tables.streamAttributionMetrics());
        names.put("batch_attr", tables.batchAttributionMetrics());
        names.put("staging_attr", tables.batchAttributionMetricsStaging());
        names.put("attr_diffs", tables.attributionDiffs());
        names.put("attr_corrections", tables.attributionCorrections());
        names.put("attr_metrics", tables.attributionMetrics());
        names.put("set_literal", "'" + set.name() + "'"); // a strict identifier: nothing to escape
        names.put("first_dim", set.dimensionNames().get(0));
        names.put("dims", tables.dimensionColumns());
        names.put("key", tables.keyColumns());
        names.put("measures", tables.measureColumns());
        names.put("dimension_columns", columns(set.dimensionNames(), d -> d + " text NOT NULL"));
        names.put("checked_measure_columns", measureColumns("", m -> " NOT NULL CHECK (" + m.name() + " >= 0)"));
        names.put("measure_columns", measureColumns("", m -> " NOT NULL"));
        names.put(
                "diff_measure_columns",
                columns(
                        set.measures(),
                        m -> "stream_" + m.name() + " " + type(m) + ", batch_" + m.name() + " " + type(m)));
        names.put("batch_measure_columns", measureColumns("batch_", m -> ""));
        names.put(
                "metric_names",
                Stream.concat(set.measureNames().stream(), Stream.of(AttributionMetrics.COLUMNS))
                        .map(n -> "'" + n + "'")
                        .collect(Collectors.joining(", ")));
        names.put("sum_type", sumType());
    }

    public MetricSet set() {
        return set;
    }

    public SetTables tables() {
        return tables;
    }

    public String schema() {
        return schema;
    }

    /** Every object of the set, in dependency order: what {@code migrate} runs for a set it has not seen. */
    public List<String> create() {
        List<String> all = new ArrayList<>(createTables());
        if (set.attribution()) all.addAll(createAttribution());
        all.addAll(dropServing());
        all.addAll(createServing());
        return all;
    }

    /**
     * The objects that hold or log rows (V2-V4, V7-V8, V12's indexes, V15-V22), their functions, triggers and
     * grants, and the set's reconciled-ranges function. None of it depends on anything that may change in place.
     */
    public List<String> createTables() {
        List<String> s = new ArrayList<>();
        // ---- stream and batch (V2, V3, V7, V8, V12's indexes, V14, V22) ----
        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {stream} (
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    {checked_measure_columns},
                    revision integer NOT NULL CHECK (revision >= 1),
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY ({key}),
                    CHECK (window_end > window_start))"""));
        s.add(fill("CREATE INDEX IF NOT EXISTS {stream}_window_end ON {stream} (window_end)"));
        s.add(fill("CREATE INDEX IF NOT EXISTS {stream}{by_dim} ON {stream} ({first_dim}, window_start)"));
        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {batch} (
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    {checked_measure_columns},
                    run_id bigint NOT NULL,
                    computed_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY ({key}),
                    CHECK (window_end > window_start))"""));
        s.add(fill("CREATE INDEX IF NOT EXISTS {batch}{by_dim} ON {batch} ({first_dim}, window_start)"));
        s.add(fill("""
                CREATE UNLOGGED TABLE IF NOT EXISTS {staging} (
                    run_id bigint NOT NULL,
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    {measure_columns})"""));
        s.add(fill("CREATE INDEX IF NOT EXISTS {staging}_run ON {staging} (run_id)"));
        s.add(fill("CREATE INDEX IF NOT EXISTS {staging}_key ON {staging} (run_id, {key})"));
        s.add(fill("GRANT SELECT, INSERT, UPDATE ON {stream} TO {stream_role}"));
        s.add(fill("GRANT SELECT, INSERT, UPDATE, DELETE ON {batch}, {staging} TO {batch_role}"));
        // The batch layer compares window sizes with the stream's rows, and may read nothing else of them (V14).
        s.add(fill("GRANT SELECT (window_start, window_end) ON {stream} TO {batch_role}"));
        s.add(fill("GRANT SELECT ON {stream}, {batch} TO {reconciler_role}"));

        // ---- reconciliation (V4, V8, V11, V15-V18) ----
        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {diffs} (
                    run_id bigint NOT NULL,
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    status text NOT NULL
                        CHECK (status IN ('match', 'mismatch', 'missing_in_stream', 'missing_in_batch')),
                    within_tolerance boolean NOT NULL,
                    stream_revision integer,
                    {diff_measure_columns},
                    PRIMARY KEY (run_id, {key}))"""));
        s.add(fill("GRANT SELECT, INSERT, UPDATE, DELETE ON {diffs} TO {reconciler_role}"));
        s.add(fill("GRANT SELECT ON {diffs} TO {finance_role}"));

        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {log} (
                    log_id bigserial PRIMARY KEY,
                    reconciliation_run_id bigint NOT NULL REFERENCES reconciliation_runs (run_id),
                    window_start timestamptz NOT NULL,
                    {dimension_columns},
                    metric text NOT NULL CHECK (metric IN ({metric_names})),
                    before_value {sum_type},
                    after_value {sum_type},
                    reason text NOT NULL,
                    logged_at timestamptz NOT NULL DEFAULT now())"""));
        s.add(fill("CREATE INDEX IF NOT EXISTS {log}_key ON {log} ({key})"));
        // Privileges alone do not bind the table owner or a superuser; these triggers do (V4).
        s.add(fill("""
                CREATE OR REPLACE FUNCTION {log_append_only}() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    RAISE EXCEPTION '{log} is append-only: % is not allowed', TG_OP
                        USING ERRCODE = 'insufficient_privilege';
                END
                $$"""));
        s.add(fill("""
                CREATE OR REPLACE TRIGGER {log}_no_update_delete
                    BEFORE UPDATE OR DELETE ON {log}
                    FOR EACH ROW EXECUTE FUNCTION {log_append_only}()"""));
        s.add(fill("""
                CREATE OR REPLACE TRIGGER {log}_no_truncate
                    BEFORE TRUNCATE ON {log}
                    FOR EACH STATEMENT EXECUTE FUNCTION {log_append_only}()"""));
        s.add(fill("GRANT SELECT, INSERT ON {log} TO {reconciler_role}"));
        s.add(fill("GRANT USAGE, SELECT ON SEQUENCE {log_seq} TO {reconciler_role}"));
        s.add(fill("GRANT SELECT ON {log} TO {finance_role}"));

        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {rw} (
                    window_start timestamptz PRIMARY KEY,
                    stream_keys bigint NOT NULL,
                    stream_fingerprint bigint NOT NULL,
                    batch_keys bigint NOT NULL,
                    batch_fingerprint bigint NOT NULL,
                    final_keys bigint NOT NULL,
                    final_fingerprint bigint NOT NULL,
                    reconciliation_run_id bigint NOT NULL REFERENCES reconciliation_runs (run_id),
                    reconciled_at timestamptz NOT NULL DEFAULT now(),
                    fingerprint_version smallint NOT NULL DEFAULT 1,
                    final_writes bigint,
                    stream_min_window_end timestamptz,
                    stream_max_window_end timestamptz,
                    batch_min_window_end timestamptz,
                    batch_max_window_end timestamptz,
                    {batch_measure_columns})"""));
        s.add(fill("GRANT SELECT, INSERT, UPDATE ON {rw} TO {reconciler_role}"));

        // ---- window_corrections, partitioned, and what lets the reconciler add a partition (V17, V19, V20) ----
        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {wc} (
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    {checked_measure_columns},
                    removed boolean NOT NULL DEFAULT false,
                    reconciliation_run_id bigint NOT NULL,
                    batch_run_id bigint,
                    finalized_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY ({key})
                ) PARTITION BY RANGE (window_start)"""));
        s.add(fill("CREATE INDEX IF NOT EXISTS {wc}{by_dim} ON {wc} ({first_dim}, window_start)"));
        s.add(fill("CREATE TABLE IF NOT EXISTS {wc_default} PARTITION OF {wc} DEFAULT"));
        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {wc_partitions} (
                    partition_name text PRIMARY KEY,
                    bounds tstzrange NOT NULL CHECK (NOT isempty(bounds)),
                    attached boolean NOT NULL DEFAULT false,
                    EXCLUDE USING gist (bounds WITH &&))"""));
        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {wc_writes} (
                    write_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    operation text NOT NULL,
                    written_by name NOT NULL DEFAULT session_user,
                    written_at timestamptz NOT NULL DEFAULT now())"""));
        s.add(fill("""
                CREATE OR REPLACE FUNCTION {wc_written}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                    SET search_path = pg_catalog, pg_temp AS $$
                BEGIN
                    INSERT INTO {schema}.{wc_writes} (operation) VALUES (TG_OP);
                    RETURN NULL;
                END
                $$"""));
        // Nobody calls it: a trigger function's EXECUTE is checked when the trigger is created, not when it fires.
        s.add(fill("REVOKE EXECUTE ON FUNCTION {wc_written}() FROM PUBLIC"));
        for (String table : List.of("{wc}", "{wc_default}")) {
            s.add(fill("CREATE OR REPLACE TRIGGER {wc_written} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON " + table
                    + " FOR EACH STATEMENT EXECUTE FUNCTION {wc_written}()"));
        }
        s.add(fill("GRANT SELECT, INSERT, UPDATE ON {wc} TO {reconciler_role}"));
        s.add(fill("GRANT SELECT ON {wc_partitions}, {wc_writes} TO {reconciler_role}"));
        s.addAll(partitionFunctions());

        // ---- window_writes and its triggers on the stream and batch tables (V21) ----
        s.add(fill("""
                CREATE TABLE IF NOT EXISTS {ww} (
                    side text NOT NULL CHECK (side IN ('stream', 'batch')),
                    window_start timestamptz NOT NULL,
                    written_at timestamptz NOT NULL DEFAULT now())"""));
        s.add(fill("CREATE INDEX IF NOT EXISTS {ww}_window ON {ww} (window_start)"));
        s.add(fill("""
                CREATE OR REPLACE FUNCTION {rows_written}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                    SET search_path = pg_catalog, pg_temp AS $$
                BEGIN
                    IF TG_OP = 'TRUNCATE' THEN
                        INSERT INTO {schema}.{ww} (side, window_start)
                        SELECT TG_ARGV[0], window_start FROM {schema}.{rw};
                        RETURN NULL;
                    END IF;
                    IF TG_OP = 'DELETE' THEN
                        INSERT INTO {schema}.{ww} (side, window_start) VALUES (TG_ARGV[0], OLD.window_start);
                    ELSE
                        INSERT INTO {schema}.{ww} (side, window_start) VALUES (TG_ARGV[0], NEW.window_start);
                        IF TG_OP = 'UPDATE' AND NEW.window_start IS DISTINCT FROM OLD.window_start THEN
                            INSERT INTO {schema}.{ww} (side, window_start)
                            VALUES (TG_ARGV[0], OLD.window_start);
                        END IF;
                    END IF;
                    RETURN NULL;
                END
                $$"""));
        s.add(fill("REVOKE EXECUTE ON FUNCTION {rows_written}() FROM PUBLIC"));
        for (String side : List.of("stream", "batch")) {
            String table = "{" + side + "}";
            // The WHEN skips the rows of writers that log their windows themselves (SET LOCAL, as for the default).
            s.add(fill("CREATE OR REPLACE TRIGGER " + table + "_written AFTER INSERT OR UPDATE OR DELETE ON " + table
                    + " FOR EACH ROW WHEN (current_setting('recount.window_writes_logged', true) IS DISTINCT FROM"
                    + " 'on') EXECUTE FUNCTION {rows_written}('" + side + "')"));
            s.add(fill("CREATE OR REPLACE TRIGGER " + table + "_truncated AFTER TRUNCATE ON " + table
                    + " FOR EACH STATEMENT EXECUTE FUNCTION {rows_written}('" + side + "')"));
        }
        s.add(fill("GRANT INSERT ON {ww} TO {stream_role}, {batch_role}"));
        s.add(fill("GRANT SELECT, DELETE ON {ww} TO {reconciler_role}"));

        // ---- the reconciled ranges of this set (V12, V26) ----
        s.add(fill("""
                CREATE OR REPLACE FUNCTION {reconciled_ranges}() RETURNS tstzmultirange
                    LANGUAGE sql STABLE PARALLEL SAFE AS $$
                    SELECT coalesce(range_agg(tstzrange(r.range_from, r.range_to)), '{}'::tstzmultirange)
                    FROM reconciliation_runs r
                    WHERE r.status = 'succeeded' AND NOT r.dry_run AND r.batch_run_id IS NULL
                      AND {set_literal} = ANY (r.metric_sets)
                $$"""));
        s.add(fill("REVOKE EXECUTE ON FUNCTION {reconciled_ranges}() FROM PUBLIC"));
        s.add(fill("GRANT EXECUTE ON FUNCTION {reconciled_ranges}() TO {reconciler_role}, {finance_role}"));
        return s;
    }

    /** V19's and V20's SECURITY DEFINER functions, for this set's window_corrections. */
    private List<String> partitionFunctions() {
        List<String> s = new ArrayList<>();
        // #variable_conflict: a dimension may be named like a parameter (range_from); the parameter is meant.
        s.add(fill("""
                CREATE OR REPLACE FUNCTION {wc_new_partition}(
                        range_from timestamptz, range_to timestamptz, run_id bigint,
                        scope_from timestamptz, scope_to timestamptz, window_starts timestamptz[]) RETURNS text
                    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
                #variable_conflict use_variable
                DECLARE
                    t text;
                    constraints text;
                BEGIN
                    IF range_from IS NULL OR range_to IS NULL OR range_to <= range_from
                            OR range_from = '-infinity' OR range_to = 'infinity' THEN
                        RAISE EXCEPTION '{wc_new_partition}: need finite range_from < range_to, got [%, %)',
                            range_from, range_to;
                    END IF;
                    IF run_id IS NULL OR scope_from IS NULL OR scope_to IS NULL
                            OR scope_from < range_from OR scope_to > range_to OR scope_to <= scope_from THEN
                        RAISE EXCEPTION '{wc_new_partition}: need a run and a scope [%, %) within [%, %)',
                            scope_from, scope_to, range_from, range_to;
                    END IF;
                    -- One at a time: two runs can not both find the same range free (runs are serialized anyway).
                    LOCK TABLE {schema}.{wc_partitions} IN SHARE ROW EXCLUSIVE MODE;
                    IF EXISTS (SELECT 1 FROM {schema}.{wc_partitions} p WHERE p.bounds && tstzrange(range_from, range_to))
                            OR EXISTS (SELECT 1 FROM {schema}.{wc} c
                                       WHERE c.window_start >= range_from AND c.window_start < range_to) THEN
                        RETURN NULL;
                    END IF;
                    t := '{partition_prefix}' || to_char(range_from AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MI') || '_'
                         || to_char(range_to AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MI');
                    -- {wc}'s columns, in its order and of its types (ATTACH checks them; merging selects *).
                    EXECUTE format('CREATE TABLE {schema}.%I AS SELECT window_start, window_end, {dims},'
                                   ' {measures}, false AS removed, %s::bigint AS reconciliation_run_id,'
                                   ' run_id AS batch_run_id, now() AS finalized_at FROM {schema}.{batch}'
                                   ' WHERE window_start >= %L AND window_start < %L AND (%L::timestamptz[] IS NULL'
                                   ' OR window_start = ANY (%L::timestamptz[]))',
                                   t, run_id, scope_from, scope_to, window_starts, window_starts);
                    -- The partitioned table's NOT NULLs, checks (by name: ATTACH matches them so) and defaults, read
                    -- from the catalog so that they cannot drift from it, plus the range, in one ALTER TABLE.
                    SELECT string_agg(c, ', ') INTO constraints FROM (
                        SELECT format('ALTER COLUMN %I SET NOT NULL', a.attname) AS c
                            FROM pg_attribute a
                            WHERE a.attrelid = '{schema}.{wc}'::regclass AND a.attnum > 0
                              AND NOT a.attisdropped AND a.attnotnull
                        UNION ALL
                        SELECT format('ALTER COLUMN %I SET DEFAULT %s', a.attname, pg_get_expr(d.adbin, d.adrelid))
                            FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
                            WHERE d.adrelid = '{schema}.{wc}'::regclass
                        UNION ALL
                        SELECT format('ADD CONSTRAINT %I %s', k.conname, pg_get_constraintdef(k.oid))
                            FROM pg_constraint k
                            WHERE k.conrelid = '{schema}.{wc}'::regclass AND k.contype = 'c'
                    ) parts;
                    EXECUTE format('ALTER TABLE {schema}.%I %s, ADD CONSTRAINT %I CHECK (window_start >= %L'
                                   ' AND window_start < %L)', t, constraints, t || '_bounds', range_from, range_to);
                    EXECUTE format('CREATE TRIGGER {wc_written} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON'
                                   ' {schema}.%I FOR EACH STATEMENT EXECUTE FUNCTION {schema}.{wc_written}()', t);
                    -- Its rows were written before the trigger existed: count that write as the trigger would have.
                    INSERT INTO {schema}.{wc_writes} (operation) VALUES ('INSERT');
                    EXECUTE format('GRANT SELECT, INSERT ON {schema}.%I TO {reconciler_role}', t);
                    INSERT INTO {schema}.{wc_partitions} (partition_name, bounds)
                        VALUES (t, tstzrange(range_from, range_to));
                    RETURN t;
                END
                $$"""));
        s.add(fill("""
                CREATE OR REPLACE FUNCTION {wc_index_partition}(partition_name text) RETURNS void
                    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
                BEGIN
                    IF NOT EXISTS (SELECT 1 FROM {schema}.{wc_partitions} p
                                   WHERE p.partition_name = {wc_index_partition}.partition_name AND NOT p.attached) THEN
                        RAISE EXCEPTION '{wc_index_partition}: % is no new partition of {wc}', partition_name;
                    END IF;
                    EXECUTE format('ALTER TABLE {schema}.%I ADD CONSTRAINT %I PRIMARY KEY ({key})',
                                   partition_name, partition_name || '_pkey');
                    EXECUTE format('CREATE INDEX %I ON {schema}.%I ({first_dim}, window_start)',
                                   partition_name || '{by_dim}', partition_name);
                END
                $$"""));
        s.add(fill("""
                CREATE OR REPLACE FUNCTION {wc_attach_partition}(partition_name text) RETURNS void
                    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
                DECLARE
                    b tstzrange;
                BEGIN
                    SELECT p.bounds INTO b FROM {schema}.{wc_partitions} p
                        WHERE p.partition_name = {wc_attach_partition}.partition_name AND NOT p.attached;
                    IF b IS NULL THEN
                        RAISE EXCEPTION '{wc_attach_partition}: % is no new partition of {wc}', partition_name;
                    END IF;
                    EXECUTE format('ALTER TABLE {schema}.{wc} ATTACH PARTITION {schema}.%I FOR VALUES FROM (%L) TO (%L)',
                                   partition_name, lower(b), upper(b));
                    -- From now on it is written through {wc} only.
                    EXECUTE format('REVOKE ALL ON {schema}.%I FROM {reconciler_role}', partition_name);
                    UPDATE {schema}.{wc_partitions} p SET attached = true
                        WHERE p.partition_name = {wc_attach_partition}.partition_name;
                END
                $$"""));
        s.add(fill("""
                CREATE OR REPLACE FUNCTION {wc_merge_partition}(partition_name text) RETURNS bigint
                    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
                DECLARE
                    n bigint;
                BEGIN
                    IF NOT EXISTS (SELECT 1 FROM {schema}.{wc_partitions} p
                                   WHERE p.partition_name = {wc_merge_partition}.partition_name AND NOT p.attached) THEN
                        RAISE EXCEPTION '{wc_merge_partition}: % is no new partition of {wc}', partition_name;
                    END IF;
                    EXECUTE format('INSERT INTO {schema}.{wc} SELECT * FROM {schema}.%I', partition_name);
                    GET DIAGNOSTICS n = ROW_COUNT;
                    EXECUTE format('DROP TABLE {schema}.%I', partition_name);
                    DELETE FROM {schema}.{wc_partitions} p
                        WHERE p.partition_name = {wc_merge_partition}.partition_name;
                    RETURN n;
                END
                $$"""));
        String functions = fill(
                "{wc_new_partition}(timestamptz, timestamptz, bigint, timestamptz, timestamptz,"
                        + " timestamptz[]), {wc_index_partition}(text), {wc_attach_partition}(text), {wc_merge_partition}(text)");
        s.add("REVOKE EXECUTE ON FUNCTION " + functions + " FROM PUBLIC");
        s.add("GRANT EXECUTE ON FUNCTION " + functions + " TO " + names.get("reconciler_role"));
        return s;
    }

    /**
     * V13's attribution tables and view with the set's dimensions: what the stream and batch layers write when the
     * set has attribution. Created when the set has it (also when it is switched on in place); kept when it is
     * switched off, as every table.
     */
    public List<String> createAttribution() {
        List<String> s = new ArrayList<>();
        Map<String, String> attr = new HashMap<>();
        attr.put("checked_attribution_columns", attributionColumns(c -> " NOT NULL CHECK (" + c + " >= 0)"));
        attr.put("attribution_columns", attributionColumns(c -> " NOT NULL"));
        attr.put(
                "diff_attribution_columns",
                columns(
                        List.of(AttributionMetrics.COLUMNS),
                        c -> "stream_" + c + " " + attributionType(c) + ", batch_" + c + " " + attributionType(c)));
        s.add(fill(attr, """
                CREATE TABLE IF NOT EXISTS {stream_attr} (
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    {checked_attribution_columns},
                    revision integer NOT NULL CHECK (revision >= 1),
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY ({key}),
                    CHECK (window_end > window_start))"""));
        s.add(fill("CREATE INDEX IF NOT EXISTS {stream_attr}_window_end ON {stream_attr} (window_end)"));
        s.add(fill(attr, """
                CREATE TABLE IF NOT EXISTS {batch_attr} (
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    {checked_attribution_columns},
                    run_id bigint NOT NULL,
                    computed_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY ({key}),
                    CHECK (window_end > window_start))"""));
        s.add(fill(attr, """
                CREATE UNLOGGED TABLE IF NOT EXISTS {staging_attr} (
                    run_id bigint NOT NULL,
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    {attribution_columns})"""));
        s.add(fill("CREATE INDEX IF NOT EXISTS {staging_attr}_run ON {staging_attr} (run_id, {key})"));
        s.add(fill(attr, """
                CREATE TABLE IF NOT EXISTS {attr_diffs} (
                    run_id bigint NOT NULL REFERENCES reconciliation_runs (run_id),
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    status text NOT NULL
                        CHECK (status IN ('match', 'mismatch', 'missing_in_stream', 'missing_in_batch')),
                    within_tolerance boolean NOT NULL,
                    stream_revision integer,
                    {diff_attribution_columns},
                    PRIMARY KEY (run_id, {key}))"""));
        s.add(fill(attr, """
                CREATE TABLE IF NOT EXISTS {attr_corrections} (
                    window_start timestamptz NOT NULL,
                    window_end timestamptz NOT NULL,
                    {dimension_columns},
                    {checked_attribution_columns},
                    removed boolean NOT NULL DEFAULT false,
                    reconciliation_run_id bigint NOT NULL,
                    batch_run_id bigint,
                    finalized_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY ({key}))"""));
        // Its columns never change (the set's dimensions and AttributionMetrics'), so OR REPLACE is enough.
        s.add(fill(attr, """
                CREATE OR REPLACE VIEW {attr_metrics} AS
                SELECT c.window_start, c.window_end, %s, %s,
                       'batch'::text AS source, true AS is_final, c.finalized_at AS updated_at
                FROM {attr_corrections} c
                WHERE NOT c.removed
                UNION ALL
                SELECT s.window_start, s.window_end, %s, %s,
                       'stream'::text, false, s.updated_at
                FROM {stream_attr} s
                WHERE NOT EXISTS (SELECT 1 FROM {attr_corrections} c WHERE %s)
                UNION ALL
                SELECT b.window_start, b.window_end, %s, %s,
                       'batch'::text, false, b.computed_at
                FROM {batch_attr} b
                WHERE NOT EXISTS (SELECT 1 FROM {attr_corrections} c WHERE %s)
                  AND NOT EXISTS (SELECT 1 FROM {stream_attr} s WHERE %s)""".formatted(
                        qualified("c", set.dimensionNames()),
                        qualified("c", List.of(AttributionMetrics.COLUMNS)),
                        qualified("s", set.dimensionNames()),
                        qualified("s", List.of(AttributionMetrics.COLUMNS)),
                        sameKey("c", "s"),
                        qualified("b", set.dimensionNames()),
                        qualified("b", List.of(AttributionMetrics.COLUMNS)),
                        sameKey("c", "b"),
                        sameKey("s", "b"))));
        s.add(fill("GRANT SELECT, INSERT, UPDATE ON {stream_attr} TO {stream_role}"));
        s.add(fill("GRANT SELECT, INSERT, UPDATE, DELETE ON {batch_attr}, {staging_attr} TO {batch_role}"));
        s.add(fill("GRANT SELECT ON {stream_attr}, {batch_attr}, {attr_metrics} TO {reconciler_role}"));
        s.add(fill("GRANT SELECT, INSERT, UPDATE, DELETE ON {attr_diffs} TO {reconciler_role}"));
        s.add(fill("GRANT SELECT, INSERT, UPDATE ON {attr_corrections} TO {reconciler_role}"));
        s.add(fill("GRANT SELECT ON {attr_metrics}, {attr_diffs} TO {finance_role}"));
        return s;
    }

    /**
     * Drops what {@link #createServing()} creates, whichever rollups the set had: the view (its ratio columns may have
     * changed), the rollup functions and their row type, the sliding view. Without CASCADE: an object of someone
     * else's that reads them makes PostgreSQL refuse, rather than vanish with them.
     */
    public List<String> dropServing() {
        return List.of(
                fill("DROP VIEW IF EXISTS {recent_sliding}"),
                fill("DROP FUNCTION IF EXISTS {sliding}(integer, timestamptz, timestamptz)"),
                fill("DROP FUNCTION IF EXISTS {hourly}(timestamptz, timestamptz)"),
                fill("DROP FUNCTION IF EXISTS {daily}(date, date)"),
                fill("DROP FUNCTION IF EXISTS {period_metrics}(text, timestamptz, timestamptz)"),
                fill("DROP TYPE IF EXISTS {row_type}"),
                fill("DROP VIEW IF EXISTS {wm}"));
    }

    /**
     * The serving view (V5, V8, V12, V19: finalized, else the stream's, else the batch's; the set's ratios at the end)
     * and the rollups the set declares (V12: hourly and daily per period, sliding sums and their recent view), with
     * their grants. Run after {@link #dropServing()}.
     */
    public List<String> createServing() {
        List<String> s = new ArrayList<>();
        s.add(fill("CREATE VIEW {wm} AS\n") + "SELECT u.*" + ratioColumns("u", ",\n       ") + "\nFROM (\n"
                + fill("""
                            SELECT c.window_start, c.window_end, %s, %s,
                                   'batch'::text AS source, true AS is_final, c.finalized_at AS updated_at
                            FROM {wc} c
                            WHERE NOT c.removed
                            UNION ALL
                            SELECT s.window_start, s.window_end, %s, %s,
                                   'stream'::text, false, s.updated_at
                            FROM {stream} s
                            WHERE NOT EXISTS (SELECT 1 FROM {wc} c WHERE %s)
                            UNION ALL
                            SELECT b.window_start, b.window_end, %s, %s,
                                   'batch'::text, false, b.computed_at
                            FROM {batch} b
                            WHERE NOT EXISTS (SELECT 1 FROM {wc} c WHERE %s)
                              AND NOT EXISTS (SELECT 1 FROM {stream} s WHERE %s)
                        ) u""".formatted(
                                qualified("c", set.dimensionNames()),
                                qualified("c", set.measureNames()),
                                qualified("s", set.dimensionNames()),
                                qualified("s", set.measureNames()),
                                sameKey("c", "s"),
                                qualified("b", set.dimensionNames()),
                                qualified("b", set.measureNames()),
                                sameKey("c", "b"),
                                sameKey("s", "b"))));
        s.add(fill("GRANT SELECT ON {wm} TO {reconciler_role}, {finance_role}"));

        List<String> functions = new ArrayList<>();
        boolean periods = set.rollups().contains(Rollup.HOURLY) || set.rollups().contains(Rollup.DAILY);
        if (periods) {
            s.add(fill("CREATE TYPE {row_type} AS (period_start timestamptz, period_end timestamptz, ")
                    + columns(set.dimensionNames(), d -> d + " text") + ", "
                    + columns(set.measures(), m -> m.name() + " " + rollupType(m)) + ratioTypes() + ", windows bigint,"
                    + " is_final boolean)");
            // Parameters by position ($1...): a dimension or measure may be named like one of them (p_from), and a
            // column of that name would win in a SQL function's body.
            s.add(fill("""
                    CREATE FUNCTION {period_metrics}(p_unit text, p_from timestamptz, p_to timestamptz)
                        RETURNS SETOF {row_type} LANGUAGE sql STABLE AS $$
                        SELECT g.period_start, g.period_end, %s,
                               %s%s,
                               g.windows,
                               g.rows_final AND (SELECT {reconciled_ranges}()) @> tstzrange(g.period_start, g.period_end)
                        FROM (
                            SELECT p.period_start,
                                   period_end($1, p.period_start, (SELECT time_zone FROM serving_settings)) AS period_end,
                                   %s,
                                   %s,
                                   count(*) AS windows, bool_and(p.is_final) AS rows_final
                            FROM (
                                SELECT date_trunc($1, m.window_start, (SELECT time_zone FROM serving_settings))
                                           AS period_start, m.*
                                FROM {wm} m
                                WHERE $2 < $3
                                  AND m.window_start >= (SELECT date_trunc($1, $2, z.time_zone) FROM serving_settings z)
                                  AND m.window_start < (SELECT period_end($1,
                                                                         date_trunc($1, $3 - interval '1 microsecond',
                                                                                    z.time_zone),
                                                                         z.time_zone)
                                                        FROM serving_settings z)
                            ) p
                            GROUP BY p.period_start, %s
                        ) g
                    $$""".formatted(
                            qualified("g", set.dimensionNames()),
                            qualified("g", set.measureNames()),
                            ratioColumns("g", ", "),
                            qualified("p", set.dimensionNames()),
                            sums("p"),
                            qualified("p", set.dimensionNames()))));
            functions.add(fill("{period_metrics}(text, timestamptz, timestamptz)"));
            if (set.rollups().contains(Rollup.HOURLY)) {
                s.add(fill("CREATE FUNCTION {hourly}(p_from timestamptz, p_to timestamptz) RETURNS SETOF {row_type}"
                        + " LANGUAGE sql STABLE AS $$ SELECT * FROM {period_metrics}('hour', $1, $2) $$"));
                functions.add(fill("{hourly}(timestamptz, timestamptz)"));
            }
            if (set.rollups().contains(Rollup.DAILY)) {
                s.add(fill("CREATE FUNCTION {daily}(p_from date, p_to date) RETURNS SETOF {row_type}"
                        + " LANGUAGE sql STABLE AS $$ SELECT * FROM {period_metrics}('day', local_midnight($1),"
                        + " local_midnight($2)) $$"));
                functions.add(fill("{daily}(date, date)"));
            }
        }
        if (set.rollups().contains(Rollup.SLIDING)) {
            s.add(fill("""
                    CREATE FUNCTION {sliding}(p_minutes integer, p_from timestamptz, p_to timestamptz)
                        RETURNS TABLE (window_end timestamptz, %s, %s%s, windows bigint, is_final boolean)
                        LANGUAGE sql STABLE AS $$
                        SELECT g.window_end, %s,
                               %s%s,
                               g.windows,
                               g.rows_final AND (SELECT {reconciled_ranges}())
                                   @> tstzrange(g.window_end - make_interval(mins => $1), g.window_end)
                        FROM (
                            SELECT e.window_end, %s,
                                   %s,
                                   count(*) AS windows, bool_and(m.is_final) AS rows_final
                            FROM {wm} m
                            CROSS JOIN LATERAL generate_series(date_trunc('minute', m.window_start) + interval '1 minute',
                                                               m.window_start + make_interval(mins => $1),
                                                               interval '1 minute') AS e(window_end)
                            WHERE m.window_start >= date_trunc('minute', $2) - make_interval(mins => $1)
                              AND m.window_start < $3
                              AND e.window_end > $2 AND e.window_end <= $3
                            GROUP BY e.window_end, %s
                        ) g
                    $$""".formatted(
                            columns(set.dimensionNames(), d -> d + " text"),
                            columns(set.measures(), m -> m.name() + " " + rollupType(m)),
                            ratioTypes(),
                            qualified("g", set.dimensionNames()),
                            qualified("g", set.measureNames()),
                            ratioColumns("g", ", "),
                            qualified("m", set.dimensionNames()),
                            sums("m"),
                            qualified("m", set.dimensionNames()))));
            functions.add(fill("{sliding}(integer, timestamptz, timestamptz)"));
            // The last 5 minutes, at every minute of the last hour, as the default's recent_sliding_metrics.
            s.add(fill("CREATE VIEW {recent_sliding} AS SELECT * FROM {sliding}(5, date_trunc('minute', now())"
                    + " - interval '1 hour', date_trunc('minute', now()))"));
            s.add(fill("GRANT SELECT ON {recent_sliding} TO {finance_role}, {reconciler_role}"));
        }
        if (!functions.isEmpty()) {
            String list = String.join(", ", functions);
            s.add("REVOKE EXECUTE ON FUNCTION " + list + " FROM PUBLIC");
            s.add(fill("GRANT EXECUTE ON FUNCTION " + list + " TO {reconciler_role}, {finance_role}"));
        }
        return s;
    }

    /** The columns of the set's stream table, in order: how {@link MetricSetRegistry} recognizes its own tables. */
    public List<String> streamWindowMetricsColumns() {
        List<String> c = new ArrayList<>(List.of("window_start", "window_end"));
        c.addAll(set.dimensionNames());
        c.addAll(set.measureNames());
        c.addAll(List.of("revision", "updated_at"));
        return c;
    }

    // ---- pieces ---------------------------------------------------------------------------------------------------

    /**
     * A set's column may not take a name its tables give another column. Core refuses the reserved names and prefixes
     * for dimensions, measures and ratios; these are the combinations it cannot see: a measure whose
     * {@code batch_<measure>} column is one of reconciled_windows' own, and a dimension named like an attribution
     * column.
     */
    private void checkColumns() {
        for (String m : set.measureNames()) {
            if (RECONCILED_WINDOWS_BATCH_COLUMNS.contains("batch_" + m)) {
                throw new ConfigException(
                        "metric set " + set.name() + ": measure " + m + " would make the column batch_" + m + " of "
                                + tables.reconciledWindows() + ", which it has already; choose another name");
            }
        }
        for (String a : AttributionMetrics.COLUMNS) {
            if (set.dimensionNames().contains(a)) {
                throw new ConfigException("metric set " + set.name() + ": dimension " + a
                        + " is a column of the attribution tables; choose another name");
            }
        }
    }

    private String measureColumns(String prefix, Function<Measure, String> suffix) {
        return columns(set.measures(), m -> prefix + m.name() + " " + type(m) + suffix.apply(m));
    }

    private static <T> String columns(List<T> items, Function<T, String> column) {
        return items.stream().map(column).collect(Collectors.joining(",\n    "));
    }

    private static String qualified(String alias, List<String> columns) {
        return columns.stream().map(c -> alias + "." + c).collect(Collectors.joining(", "));
    }

    /** {@code a.window_start = b.window_start AND a.<dim> = b.<dim> ...}: the same window key. */
    private String sameKey(String a, String b) {
        StringBuilder sb = new StringBuilder(a + ".window_start = " + b + ".window_start");
        for (String d : set.dimensionNames())
            sb.append(" AND ")
                    .append(a)
                    .append('.')
                    .append(d)
                    .append(" = ")
                    .append(b)
                    .append('.')
                    .append(d);
        return sb.toString();
    }

    /** The sums of a group: a count's sum stays bigint (V12); a sum's is numeric, unbounded (many windows add up). */
    private String sums(String alias) {
        return set.measures().stream()
                .map(m -> "sum(" + alias + "." + m.name() + ")" + (m.isCount() ? "::bigint" : "") + " AS " + m.name())
                .collect(Collectors.joining(", "));
    }

    /** {@code , exact_ratio(a.num * per, a.den) AS name} per ratio: V12's exact_ratio, the Java twin of DerivedRatio. */
    private String ratioColumns(String alias, String separator) {
        StringBuilder sb = new StringBuilder();
        for (DerivedRatio r : set.ratios()) {
            String numerator = alias + "." + r.numerator();
            // numeric before multiplying: a bigint count times per could overflow bigint.
            if (r.per() != 1) numerator = numerator + "::numeric * " + r.per();
            sb.append(separator)
                    .append("exact_ratio(")
                    .append(numerator)
                    .append(", ")
                    .append(alias)
                    .append('.')
                    .append(r.denominator())
                    .append(") AS ")
                    .append(r.name());
        }
        return sb.toString();
    }

    private String ratioTypes() {
        return set.ratios().stream().map(r -> ", " + r.name() + " numeric").collect(Collectors.joining());
    }

    /** A measure's column type: core's, as PostgreSQL spells it. */
    private static String type(Measure m) {
        return m.sqlType().toLowerCase(Locale.ROOT);
    }

    /** A measure's type in rollups: counts bigint, sums numeric (V12: many windows near the bound may exceed it). */
    private static String rollupType(Measure m) {
        return m.isCount() ? type(m) : "numeric";
    }

    /** The type of values of any measure, as correction_log's before/after: the wider one. */
    private static String sumType() {
        return Measure.SUM_SQL_TYPE.toLowerCase(Locale.ROOT);
    }

    /** An attribution column's type: counts, but the attributed spend, which is a sum of costs (V13). */
    private static String attributionType(String column) {
        return (column.equals(AttributionMetrics.COLUMNS[AttributionMetrics.COLUMNS.length - 1])
                        ? Measure.SUM_SQL_TYPE
                        : Measure.COUNT_SQL_TYPE)
                .toLowerCase(Locale.ROOT);
    }

    private static String attributionColumns(Function<String, String> suffix) {
        return columns(List.of(AttributionMetrics.COLUMNS), c -> c + " " + attributionType(c) + suffix.apply(c));
    }

    private String fill(String template) {
        return fill(Map.of(), template);
    }

    /** {@code template} with every {@code {name}} replaced; an unknown name is a bug here, not in a definition. */
    private String fill(Map<String, String> extra, String template) {
        Matcher m = PLACEHOLDER.matcher(template);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = extra.getOrDefault(m.group(1), names.get(m.group(1)));
            if (value == null) throw new IllegalStateException("SetSchema: no value for {" + m.group(1) + "}");
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    @Override
    public String toString() {
        return "SetSchema{" + set.name() + " in " + schema + '}';
    }
}
