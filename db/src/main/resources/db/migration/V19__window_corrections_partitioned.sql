-- window_corrections becomes a table partitioned by range of window_start, so that the first reconciliation of a
-- day, which inserts every key of it (1,008,000 rows for 100 campaigns x 7 channels of 1-minute windows), can fill a
-- new, empty table without indexes and build its two indexes once afterwards, instead of updating both indexes row
-- by row (about 4 s of such a run's 8, against about 1.4 s to build them from the loaded table).
--
-- Layout:
--   window_corrections               the partitioned table everything reads and writes, as before (same columns,
--                                    primary key, per-campaign index, grants, statement trigger of V17)
--   window_corrections_legacy        the rows that existed before this migration, unchanged, as the partition
--                                    FROM (MINVALUE) TO (the UTC midnight after its last window_start); dropped
--                                    when the table was empty
--   window_corrections_<from>_<to>   a partition per range a first reconciliation filled (see below), usually one
--                                    day in the reconciler's time-zone, named by its bounds in UTC
--   window_corrections_default       every other key (a range no first run filled, rows inserted by hand)
--   window_corrections_partitions    which range each partition holds (no two overlap)
--
-- The reconciler may not create or attach tables itself (it is no owner of anything); the functions below,
-- which run as this schema's owner, do exactly that and nothing else, checking their arguments. Everything happens
-- in the reconciler's transaction: until it commits, nobody else sees the new table, and if it fails or is killed,
-- the table, its rows and its registration are rolled back together.

-- The serving view names window_corrections; recreated below from its own definition so that it reads the new table.
DO $$
DECLARE
    view_sql text := pg_get_viewdef('window_metrics'::regclass);
    last_start timestamptz;
BEGIN
    ALTER TABLE window_corrections RENAME TO window_corrections_legacy;
    ALTER TABLE window_corrections_legacy RENAME CONSTRAINT window_corrections_pkey TO window_corrections_legacy_pkey;
    ALTER INDEX window_corrections_campaign RENAME TO window_corrections_legacy_campaign;

    -- The checks named as the legacy table's: attaching it needs the same constraints by name.
    CREATE TABLE window_corrections (
        window_start          timestamptz   NOT NULL,
        window_end            timestamptz   NOT NULL,
        campaign_id           text          NOT NULL,
        channel_id            text          NOT NULL,
        impressions           bigint        NOT NULL
                              CONSTRAINT window_corrections_impressions_check CHECK (impressions >= 0),
        clicks                bigint        NOT NULL
                              CONSTRAINT window_corrections_clicks_check CHECK (clicks >= 0),
        conversions           bigint        NOT NULL
                              CONSTRAINT window_corrections_conversions_check CHECK (conversions >= 0),
        spend_micros          numeric(38,0) NOT NULL
                              CONSTRAINT window_corrections_spend_micros_check CHECK (spend_micros >= 0),
        events                bigint        NOT NULL
                              CONSTRAINT window_corrections_events_check CHECK (events >= 0),
        removed               boolean       NOT NULL DEFAULT false,
        reconciliation_run_id bigint        NOT NULL,
        batch_run_id          bigint,
        finalized_at          timestamptz   NOT NULL DEFAULT now(),
        PRIMARY KEY (window_start, campaign_id, channel_id)
    ) PARTITION BY RANGE (window_start);
    CREATE INDEX window_corrections_campaign ON window_corrections (campaign_id, window_start);

    EXECUTE 'CREATE OR REPLACE VIEW window_metrics AS ' || view_sql;

    CREATE TABLE window_corrections_partitions (
        partition_name text      PRIMARY KEY,
        bounds         tstzrange NOT NULL CHECK (NOT isempty(bounds)),
        attached       boolean   NOT NULL DEFAULT false,
        EXCLUDE USING gist (bounds WITH &&)
    );

    SELECT max(window_start) INTO last_start FROM window_corrections_legacy;
    IF last_start IS NULL THEN
        DROP TABLE window_corrections_legacy;
    ELSE
        -- The CHECK lets ATTACH skip scanning the rows; it proves what the scan would.
        last_start := date_trunc('day', last_start, 'UTC') + interval '1 day';
        EXECUTE format('ALTER TABLE window_corrections_legacy ADD CONSTRAINT window_corrections_legacy_bounds'
                       ' CHECK (window_start < %L)', last_start);
        EXECUTE format('ALTER TABLE window_corrections ATTACH PARTITION window_corrections_legacy'
                       ' FOR VALUES FROM (MINVALUE) TO (%L)', last_start);
        INSERT INTO window_corrections_partitions VALUES
            ('window_corrections_legacy', tstzrange(NULL, last_start), true);
    END IF;
END
$$;

CREATE TABLE window_corrections_default PARTITION OF window_corrections DEFAULT;

-- V17's count of writes: a statement on the partitioned table fires its own statement trigger once (not the
-- partitions'); a statement naming a partition (by hand, or the reconciler filling a new one) fires the partition's.
CREATE TRIGGER window_corrections_written
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON window_corrections
    FOR EACH STATEMENT EXECUTE FUNCTION window_corrections_written();
CREATE TRIGGER window_corrections_written
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON window_corrections_default
    FOR EACH STATEMENT EXECUTE FUNCTION window_corrections_written();

GRANT SELECT, INSERT, UPDATE ON window_corrections TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT ON window_corrections_partitions TO ${flyway:defaultSchema}_reconciler_role;

-- A new, empty table for the keys of [range_from, range_to), to be filled by the reconciler's run and then given to
-- window_corrections_attach_partition. Returns its name, or NULL when the range cannot have a table of its own: a
-- partition's range overlaps it, or window_corrections already holds a key in it (in the default partition). The
-- table has window_corrections' columns, defaults and checks, a CHECK of the range (so that attaching it need not
-- scan it), V17's write trigger, and no index; the reconciler may insert into it and read it until it is attached.
CREATE FUNCTION window_corrections_new_partition(range_from timestamptz, range_to timestamptz) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t text;
BEGIN
    IF range_from IS NULL OR range_to IS NULL OR range_to <= range_from
            OR range_from = '-infinity' OR range_to = 'infinity' THEN
        RAISE EXCEPTION 'window_corrections_new_partition: need finite range_from < range_to, got [%, %)',
            range_from, range_to;
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
    EXECUTE format('CREATE TABLE ${flyway:defaultSchema}.%I (LIKE ${flyway:defaultSchema}.window_corrections'
                   ' INCLUDING DEFAULTS INCLUDING CONSTRAINTS, CONSTRAINT %I CHECK (window_start >= %L'
                   ' AND window_start < %L))', t, t || '_bounds', range_from, range_to);
    EXECUTE format('CREATE TRIGGER window_corrections_written AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON'
                   ' ${flyway:defaultSchema}.%I FOR EACH STATEMENT EXECUTE FUNCTION'
                   ' ${flyway:defaultSchema}.window_corrections_written()', t);
    EXECUTE format('GRANT SELECT, INSERT ON ${flyway:defaultSchema}.%I TO ${flyway:defaultSchema}_reconciler_role',
                   t);
    INSERT INTO ${flyway:defaultSchema}.window_corrections_partitions (partition_name, bounds)
        VALUES (t, tstzrange(range_from, range_to));
    RETURN t;
END
$$;

-- Builds the indexes of a table window_corrections_new_partition made: the primary key, then the per-campaign index
-- (maintenance_work_mem is the caller's).
CREATE FUNCTION window_corrections_index_partition(partition_name text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.window_corrections_partitions p
                   WHERE p.partition_name = window_corrections_index_partition.partition_name AND NOT p.attached) THEN
        RAISE EXCEPTION 'window_corrections_index_partition: % is no new partition of window_corrections',
            partition_name;
    END IF;
    EXECUTE format('ALTER TABLE ${flyway:defaultSchema}.%I ADD CONSTRAINT %I PRIMARY KEY'
                   ' (window_start, campaign_id, channel_id)', partition_name, partition_name || '_pkey');
    EXECUTE format('CREATE INDEX %I ON ${flyway:defaultSchema}.%I (campaign_id, window_start)',
                   partition_name || '_campaign', partition_name);
END
$$;

-- Attaches such a table, indexed, to window_corrections for its range; from then on the reconciler writes it only
-- through window_corrections, like every other partition. Attaching locks the default partition (it checks that none
-- of its rows belong to the range) until the transaction ends: call it just before committing, with a short
-- lock_timeout (see window_corrections_merge_partition).
CREATE FUNCTION window_corrections_attach_partition(partition_name text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    b tstzrange;
BEGIN
    SELECT p.bounds INTO b FROM ${flyway:defaultSchema}.window_corrections_partitions p
        WHERE p.partition_name = window_corrections_attach_partition.partition_name AND NOT p.attached;
    IF b IS NULL THEN
        RAISE EXCEPTION 'window_corrections_attach_partition: % is no new partition of window_corrections',
            partition_name;
    END IF;
    EXECUTE format('ALTER TABLE ${flyway:defaultSchema}.window_corrections ATTACH PARTITION'
                   ' ${flyway:defaultSchema}.%I FOR VALUES FROM (%L) TO (%L)', partition_name, lower(b), upper(b));
    -- From now on it is written through window_corrections only.
    EXECUTE format('REVOKE ALL ON ${flyway:defaultSchema}.%I FROM ${flyway:defaultSchema}_reconciler_role',
                   partition_name);
    UPDATE ${flyway:defaultSchema}.window_corrections_partitions p SET attached = true
        WHERE p.partition_name = window_corrections_attach_partition.partition_name;
END
$$;

REVOKE EXECUTE ON FUNCTION window_corrections_new_partition(timestamptz, timestamptz),
    window_corrections_index_partition(text), window_corrections_attach_partition(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION window_corrections_new_partition(timestamptz, timestamptz),
    window_corrections_index_partition(text), window_corrections_attach_partition(text)
    TO ${flyway:defaultSchema}_reconciler_role;

-- When attaching would have to wait (a long query holds the default partition, and every reader arriving meanwhile
-- would queue behind the attach), the reconciler gives up attaching and calls this instead: the new table's rows are
-- inserted through window_corrections (so into the default partition; readers are not blocked by that), and the
-- table and its registration are dropped. Only a registered, not yet attached table.
CREATE FUNCTION window_corrections_merge_partition(partition_name text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.window_corrections_partitions p
                   WHERE p.partition_name = window_corrections_merge_partition.partition_name AND NOT p.attached) THEN
        RAISE EXCEPTION 'window_corrections_merge_partition: % is no new partition of window_corrections',
            partition_name;
    END IF;
    EXECUTE format('INSERT INTO ${flyway:defaultSchema}.window_corrections SELECT * FROM ${flyway:defaultSchema}.%I',
                   partition_name);
    GET DIAGNOSTICS n = ROW_COUNT;
    EXECUTE format('DROP TABLE ${flyway:defaultSchema}.%I', partition_name);
    DELETE FROM ${flyway:defaultSchema}.window_corrections_partitions p
        WHERE p.partition_name = window_corrections_merge_partition.partition_name;
    RETURN n;
END
$$;

REVOKE EXECUTE ON FUNCTION window_corrections_merge_partition(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION window_corrections_merge_partition(text) TO ${flyway:defaultSchema}_reconciler_role;
