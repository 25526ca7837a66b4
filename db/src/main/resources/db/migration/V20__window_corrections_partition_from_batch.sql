-- A first reconciliation's new partition of window_corrections (V19) is created already holding the batch rows it
-- finalizes, with CREATE TABLE AS, instead of created empty and filled by the reconciler's INSERT ... SELECT.
-- PostgreSQL writes a table being created that way in bulk (a pinned page, no free-space map search, a ring of
-- buffers): 1,003,000 batch rows took 0.9-1.5 s against 1.6-2.3 s for the INSERT into an empty table in the same
-- transaction, and the constraints added afterwards, checked in one scan, about 0.45 s (docs/benchmarks.md, section 10).
-- The reconciler then inserts only the keys only the stream has (hidden, as removed).
--
-- window_corrections_new_partition(range_from, range_to) is replaced by
-- window_corrections_new_partition_of_batch(range_from, range_to, run_id, scope_from, scope_to, window_starts):
-- the same checks and the same table (columns in the same order, the partitioned table's NOT NULLs, checks by the
-- same names and defaults, the CHECK of the range, V17's trigger, SELECT and INSERT for the reconciler), holding
-- every batch_window_metrics row of [scope_from, scope_to) (and of window_starts, unless NULL) as finalized by run
-- run_id: not removed, batch_run_id the batch row's run, finalized_at the transaction's time.

DROP FUNCTION window_corrections_new_partition(timestamptz, timestamptz);

CREATE FUNCTION window_corrections_new_partition_of_batch(
        range_from timestamptz, range_to timestamptz, run_id bigint,
        scope_from timestamptz, scope_to timestamptz, window_starts timestamptz[]) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t text;
    constraints text;
BEGIN
    IF range_from IS NULL OR range_to IS NULL OR range_to <= range_from
            OR range_from = '-infinity' OR range_to = 'infinity' THEN
        RAISE EXCEPTION 'window_corrections_new_partition_of_batch: need finite range_from < range_to, got [%, %)',
            range_from, range_to;
    END IF;
    IF run_id IS NULL OR scope_from IS NULL OR scope_to IS NULL
            OR scope_from < range_from OR scope_to > range_to OR scope_to <= scope_from THEN
        RAISE EXCEPTION 'window_corrections_new_partition_of_batch: need a run and a scope [%, %) within [%, %)',
            scope_from, scope_to, range_from, range_to;
    END IF;
    -- One at a time: two runs can not both find the same range free (runs are serialized anyway).
    LOCK TABLE ${flyway:defaultSchema}.window_corrections_partitions IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.window_corrections_partitions
               WHERE bounds && tstzrange(range_from, range_to))
            OR EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.window_corrections
                       WHERE window_start >= range_from AND window_start < range_to) THEN
        RETURN NULL;
    END IF;
    t := 'window_corrections_' || to_char(range_from AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MI') || '_'
         || to_char(range_to AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MI');
    -- window_corrections' columns, in its order and of its types (ATTACH checks them; merging selects *).
    EXECUTE format('CREATE TABLE ${flyway:defaultSchema}.%I AS SELECT window_start, window_end, campaign_id,'
                   ' channel_id, impressions, clicks, conversions, spend_micros, events, false AS removed,'
                   ' %s::bigint AS reconciliation_run_id, run_id AS batch_run_id, now() AS finalized_at'
                   ' FROM ${flyway:defaultSchema}.batch_window_metrics'
                   ' WHERE window_start >= %L AND window_start < %L AND (%L::timestamptz[] IS NULL'
                   ' OR window_start = ANY (%L::timestamptz[]))',
                   t, run_id, scope_from, scope_to, window_starts, window_starts);
    -- The partitioned table's NOT NULLs, checks (by name: ATTACH matches them so) and defaults, read from the
    -- catalog so that they cannot drift from it, plus the range, all in one ALTER TABLE: one scan checks them all.
    SELECT string_agg(c, ', ') INTO constraints FROM (
        SELECT format('ALTER COLUMN %I SET NOT NULL', a.attname) AS c
            FROM pg_attribute a
            WHERE a.attrelid = '${flyway:defaultSchema}.window_corrections'::regclass AND a.attnum > 0
              AND NOT a.attisdropped AND a.attnotnull
        UNION ALL
        SELECT format('ALTER COLUMN %I SET DEFAULT %s', a.attname, pg_get_expr(d.adbin, d.adrelid))
            FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
            WHERE d.adrelid = '${flyway:defaultSchema}.window_corrections'::regclass
        UNION ALL
        SELECT format('ADD CONSTRAINT %I %s', conname, pg_get_constraintdef(oid))
            FROM pg_constraint
            WHERE conrelid = '${flyway:defaultSchema}.window_corrections'::regclass AND contype = 'c'
    ) parts;
    EXECUTE format('ALTER TABLE ${flyway:defaultSchema}.%I %s, ADD CONSTRAINT %I CHECK (window_start >= %L'
                   ' AND window_start < %L)', t, constraints, t || '_bounds', range_from, range_to);
    EXECUTE format('CREATE TRIGGER window_corrections_written AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON'
                   ' ${flyway:defaultSchema}.%I FOR EACH STATEMENT EXECUTE FUNCTION'
                   ' ${flyway:defaultSchema}.window_corrections_written()', t);
    -- Its rows were written before the trigger existed: count that write as the trigger would have (V17).
    INSERT INTO ${flyway:defaultSchema}.window_corrections_writes (operation) VALUES ('INSERT');
    EXECUTE format('GRANT SELECT, INSERT ON ${flyway:defaultSchema}.%I TO ${flyway:defaultSchema}_reconciler_role',
                   t);
    INSERT INTO ${flyway:defaultSchema}.window_corrections_partitions (partition_name, bounds)
        VALUES (t, tstzrange(range_from, range_to));
    RETURN t;
END
$$;

REVOKE EXECUTE ON FUNCTION
    window_corrections_new_partition_of_batch(timestamptz, timestamptz, bigint, timestamptz, timestamptz, timestamptz[])
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    window_corrections_new_partition_of_batch(timestamptz, timestamptz, bigint, timestamptz, timestamptz, timestamptz[])
    TO ${flyway:defaultSchema}_reconciler_role;
