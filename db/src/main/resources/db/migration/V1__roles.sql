-- Roles are cluster-wide, so several recount schemas (one per test, or per environment) share them.
-- NOLOGIN group roles: a login user is granted one (or, locally, the admin uses SET ROLE), so each
-- component works with exactly the privileges below.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['recount_stream', 'recount_batch', 'recount_reconciler', 'recount_finance'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION WHEN duplicate_object THEN
                NULL; -- another schema's migration created it concurrently
            END;
        END IF;
    END LOOP;
END
$$;
