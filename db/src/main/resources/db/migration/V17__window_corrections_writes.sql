-- One row per statement that writes window_corrections (insert, update, delete or truncate; by the reconciler or by
-- hand), appended by a statement-level trigger: a statement costs one row however many rows it changes. A rerun of a
-- reconciliation compares how many rows this table has with the number its windows were recorded with
-- (reconciled_windows.final_writes): equal means nothing has written window_corrections since, so the finalized
-- side of every window is still as recorded and the run need not read and hash it. Any other number (a hand edit, a
-- run over another range) makes the run read it as before. Only the trigger writes here (its function runs as the
-- table's owner); the reconciler only counts.
CREATE TABLE window_corrections_writes (
    write_id   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    operation  text        NOT NULL,
    written_by name        NOT NULL DEFAULT session_user,
    written_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION window_corrections_written() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO ${flyway:defaultSchema}.window_corrections_writes (operation) VALUES (TG_OP);
    RETURN NULL;
END
$$;

-- Nobody calls it: a trigger function's EXECUTE is checked when the trigger is created, not when it fires.
REVOKE EXECUTE ON FUNCTION window_corrections_written() FROM PUBLIC;

CREATE TRIGGER window_corrections_written
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON window_corrections
    FOR EACH STATEMENT EXECUTE FUNCTION window_corrections_written();

-- The count of window_corrections_writes (NULL: not recorded) when the window's finalized side was recorded.
ALTER TABLE reconciled_windows ADD COLUMN final_writes bigint;

GRANT SELECT ON window_corrections_writes TO ${flyway:defaultSchema}_reconciler_role;
