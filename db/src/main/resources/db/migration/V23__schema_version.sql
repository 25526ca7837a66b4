-- The schema's version, readable by every component's login, so that a component can refuse a schema older than its
-- build before it writes anything. Without it, a release deployed before `./recount migrate` ran failed half-way,
-- at the first statement that needed a newer migration, with PostgreSQL's message about a missing column or function.
-- Flyway's history table stays the schema owner's: the function reads it as its owner and returns one number.
--
-- The highest version Flyway applied successfully. Every recount migration is V<integer>; of any other version
-- (V24.1) the leading integer counts, so that no version a later build writes can make every login fail. A schema
-- without history returns NULL, which the check treats as older than any build.
CREATE FUNCTION schema_version() RETURNS integer LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp AS $$
    SELECT max((regexp_match(version, '^[0-9]{1,9}'))[1]::integer) FROM ${flyway:defaultSchema}.flyway_schema_history
    WHERE success
$$;

REVOKE EXECUTE ON FUNCTION schema_version() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION schema_version() TO ${flyway:defaultSchema}_stream_role, ${flyway:defaultSchema}_batch_role,
    ${flyway:defaultSchema}_reconciler_role, ${flyway:defaultSchema}_finance_role;
