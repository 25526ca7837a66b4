-- Least privilege per schema. V1 created cluster-wide roles (recount_stream, ...) that every schema of the cluster
-- granted to (V6), so a login holding recount_stream could write the stream tables of EVERY schema. From here on each
-- schema has its own NOLOGIN group roles, <schema>_stream_role, <schema>_batch_role, <schema>_reconciler_role and
-- <schema>_finance_role, with exactly the privileges V6 gave the shared roles, on this schema's objects only; the
-- shared roles lose everything they held here. A component logs in as its own LOGIN role, a member (INHERIT) of its
-- group role (db's Logins; docs/operations.md, "Database logins"), so it needs no SET ROLE that it could undo.
--
-- Later migrations grant to ${flyway:defaultSchema}_<component>_role, never to the shared recount_* roles.
--
-- Roles are cluster-wide objects and this runs once per schema, possibly for several schemas at once: a role that
-- exists already is reused (and an existing LOGIN or superuser role of that name is refused, rather than given
-- recount's privileges); a concurrent creation of the same name counts as existing.
DO $$
DECLARE
    s text := '${flyway:defaultSchema}';
    c text;
    r text;
BEGIN
    -- 16 = length('_reconciler_role'): a longer name would be cut to 63 bytes and name another role.
    IF length(s) > 63 - 16 THEN
        RAISE EXCEPTION 'schema name % is too long for its role names (at most 47 characters)', s;
    END IF;
    FOREACH c IN ARRAY ARRAY['stream', 'batch', 'reconciler', 'finance'] LOOP
        r := s || '_' || c || '_role';
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL; -- created concurrently
            END;
        END IF;
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r AND (rolcanlogin OR rolsuper)) THEN
            RAISE EXCEPTION 'role % exists and can log in or is a superuser; recount''s group roles must be NOLOGIN', r;
        END IF;
    END LOOP;
END
$$;

-- Exactly the privileges V6 gave the shared roles, role by role, on this schema's tables, sequences and view.
GRANT USAGE ON SCHEMA ${flyway:defaultSchema} TO ${flyway:defaultSchema}_stream_role,
    ${flyway:defaultSchema}_batch_role, ${flyway:defaultSchema}_reconciler_role, ${flyway:defaultSchema}_finance_role;

GRANT SELECT, INSERT, UPDATE ON stream_window_metrics, stream_progress TO ${flyway:defaultSchema}_stream_role;

GRANT SELECT, INSERT, UPDATE ON batch_runs TO ${flyway:defaultSchema}_batch_role;
GRANT SELECT, INSERT, UPDATE, DELETE ON batch_window_metrics, batch_window_metrics_staging
    TO ${flyway:defaultSchema}_batch_role;
GRANT USAGE, SELECT ON SEQUENCE batch_runs_run_id_seq TO ${flyway:defaultSchema}_batch_role;
-- The completeness boundary is recorded by the stream job; batch only reads it.
GRANT SELECT ON stream_progress TO ${flyway:defaultSchema}_batch_role;

GRANT SELECT ON stream_window_metrics, batch_window_metrics, batch_runs, stream_progress
    TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT, INSERT, UPDATE ON reconciliation_runs TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT, INSERT, UPDATE, DELETE ON reconciliation_diffs TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT, INSERT, UPDATE ON window_corrections TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT, INSERT ON correction_log TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT ON window_metrics TO ${flyway:defaultSchema}_reconciler_role;
GRANT USAGE, SELECT ON SEQUENCE reconciliation_runs_run_id_seq, correction_log_log_id_seq
    TO ${flyway:defaultSchema}_reconciler_role;

GRANT SELECT ON window_metrics, reconciliation_runs, reconciliation_diffs, correction_log
    TO ${flyway:defaultSchema}_finance_role;

-- Anything else a shared role holds in this schema (a migration between V6 and this one may have granted more, e.g.
-- on an object it created) moves to the scoped role as well, so taking it away below never breaks a component.
DO $$
DECLARE
    s text := '${flyway:defaultSchema}';
    c text;
    g record;
BEGIN
    FOREACH c IN ARRAY ARRAY['stream', 'batch', 'reconciler', 'finance'] LOOP
        FOR g IN
            SELECT cl.relname, cl.relkind, a.privilege_type
            FROM pg_class cl
            JOIN pg_namespace n ON n.oid = cl.relnamespace
            CROSS JOIN LATERAL aclexplode(cl.relacl) a
            JOIN pg_roles gr ON gr.oid = a.grantee
            WHERE n.nspname = s AND gr.rolname = 'recount_' || c
        LOOP
            RAISE NOTICE 'carrying % on %.% over from recount_% to %_%_role', g.privilege_type, s, g.relname, c, s, c;
            EXECUTE format('GRANT %s ON %s %I.%I TO %I', g.privilege_type,
                           CASE WHEN g.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, s, g.relname,
                           s || '_' || c || '_role');
        END LOOP;
    END LOOP;
END
$$;

-- The shared roles keep nothing in this schema (they may still hold privileges in schemas not migrated yet).
REVOKE ALL ON ALL TABLES IN SCHEMA ${flyway:defaultSchema}
    FROM recount_stream, recount_batch, recount_reconciler, recount_finance;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${flyway:defaultSchema}
    FROM recount_stream, recount_batch, recount_reconciler, recount_finance;
REVOKE ALL ON SCHEMA ${flyway:defaultSchema}
    FROM recount_stream, recount_batch, recount_reconciler, recount_finance;
