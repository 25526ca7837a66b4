-- The schema's version, readable by every component's login, so that a component can refuse a schema older than its
-- build before it writes anything. Without it, a release deployed before `./recount migrate` ran failed half-way,
-- at the first statement that needed a newer migration, with PostgreSQL's message about a missing column or function.
-- Flyway's history table stays the schema owner's: the function reads it as its owner and returns one number.
--
-- The highest version Flyway applied successfully. Every recount migration is V<integer>; a schema it finds nothing
-- in (no history) returns NULL, which the check treats as older than any build.
CREATE FUNCTION schema_version() RETURNS integer LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp AS $$
    SELECT max(version::integer) FROM ${flyway:defaultSchema}.flyway_schema_history
    WHERE success AND version IS NOT NULL
$$;

REVOKE EXECUTE ON FUNCTION schema_version() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION schema_version() TO ${flyway:defaultSchema}_stream_role, ${flyway:defaultSchema}_batch_role,
    ${flyway:defaultSchema}_reconciler_role, ${flyway:defaultSchema}_finance_role;
