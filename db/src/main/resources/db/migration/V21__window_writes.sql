-- Which windows something has written in stream_window_metrics or batch_window_metrics since the reconciliation
-- that last recorded them, so that a rerun whose windows nothing wrote needs not read and hash every row of them.
--
-- A row here says: a committed transaction wrote (inserted, updated or deleted) rows of this window on this side.
-- Every writer adds one in the same transaction as its rows, so the row is visible exactly when they are:
-- - the stream job's committer and the batch job's replace log each window they write once per transaction, and set
--   recount.window_writes_logged to 'on' for it (SET LOCAL) to say so;
-- - any other write (a hand edit, a script, a test) is logged row by row by the triggers below, which fire only when
--   that setting is not 'on'; a TRUNCATE logs every recorded window.
-- An applied reconciliation deletes the rows of the windows it records, in the same transaction and snapshot in
-- which it reads them: what it did not see (committed after its snapshot) stays for the next run. A window of a
-- rerun's range with a row here, or not recorded, is read again as before; with none anywhere in the range, and
-- nothing written to window_corrections since (V17), the run takes every window's totals as recorded.
CREATE TABLE window_writes (
    side         text        NOT NULL CHECK (side IN ('stream', 'batch')),
    window_start timestamptz NOT NULL,
    written_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX window_writes_window ON window_writes (window_start);

-- The windows both tables hold now were written before anything logged them.
INSERT INTO window_writes (side, window_start)
SELECT 'stream', window_start FROM stream_window_metrics GROUP BY window_start
UNION ALL
SELECT 'batch', window_start FROM batch_window_metrics GROUP BY window_start;

-- TG_ARGV[0]: the side. Runs as the table owner, so whoever may write the table may log the write.
CREATE FUNCTION window_rows_written() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        INSERT INTO ${flyway:defaultSchema}.window_writes (side, window_start)
        SELECT TG_ARGV[0], window_start FROM ${flyway:defaultSchema}.reconciled_windows;
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        INSERT INTO ${flyway:defaultSchema}.window_writes (side, window_start) VALUES (TG_ARGV[0], OLD.window_start);
    ELSE
        INSERT INTO ${flyway:defaultSchema}.window_writes (side, window_start) VALUES (TG_ARGV[0], NEW.window_start);
        IF TG_OP = 'UPDATE' AND NEW.window_start IS DISTINCT FROM OLD.window_start THEN
            INSERT INTO ${flyway:defaultSchema}.window_writes (side, window_start)
            VALUES (TG_ARGV[0], OLD.window_start);
        END IF;
    END IF;
    RETURN NULL;
END
$$;

-- Nobody calls it: a trigger function's EXECUTE is checked when the trigger is created, not when it fires.
REVOKE EXECUTE ON FUNCTION window_rows_written() FROM PUBLIC;

-- The WHEN is evaluated per row before anything is queued: a logged writer's rows cost one setting lookup each.
CREATE TRIGGER stream_window_metrics_written
    AFTER INSERT OR UPDATE OR DELETE ON stream_window_metrics FOR EACH ROW
    WHEN (current_setting('recount.window_writes_logged', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION window_rows_written('stream');
CREATE TRIGGER stream_window_metrics_truncated
    AFTER TRUNCATE ON stream_window_metrics FOR EACH STATEMENT EXECUTE FUNCTION window_rows_written('stream');
CREATE TRIGGER batch_window_metrics_written
    AFTER INSERT OR UPDATE OR DELETE ON batch_window_metrics FOR EACH ROW
    WHEN (current_setting('recount.window_writes_logged', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION window_rows_written('batch');
CREATE TRIGGER batch_window_metrics_truncated
    AFTER TRUNCATE ON batch_window_metrics FOR EACH STATEMENT EXECUTE FUNCTION window_rows_written('batch');

GRANT INSERT ON window_writes TO ${flyway:defaultSchema}_stream_role, ${flyway:defaultSchema}_batch_role;
GRANT SELECT, DELETE ON window_writes TO ${flyway:defaultSchema}_reconciler_role;

-- What else the survey read of a recorded window, so that a rerun can take the window as recorded without reading
-- it: the first and last window end of the stream's and the batch's rows, and the batch's summed metrics. NULL in
-- rows recorded before V21: such a window is read again once, and recorded with them.
ALTER TABLE reconciled_windows
    ADD COLUMN stream_min_window_end timestamptz,
    ADD COLUMN stream_max_window_end timestamptz,
    ADD COLUMN batch_min_window_end  timestamptz,
    ADD COLUMN batch_max_window_end  timestamptz,
    ADD COLUMN batch_impressions     bigint,
    ADD COLUMN batch_clicks          bigint,
    ADD COLUMN batch_conversions     bigint,
    ADD COLUMN batch_spend_micros    numeric(38, 0),
    ADD COLUMN batch_events          bigint;
