-- Metric sets (docs/contract.md, "Metric sets"): what recount counts is declared in a definitions file, not in the
-- migrations. The default set keeps the objects V2-V25 created; every other set's objects (<set>__stream_window_metrics,
-- <set>__window_metrics, ...) are created by `./recount migrate` from its definition (db's SetSchema), which then
-- records the set here (MetricSetRegistry). A component checks at start that every set it computes or serves is
-- recorded here with the definition it was given, so that rows are never written under a definition their tables
-- were not made for.

-- One row per set migrate has seen. fingerprint: what may not change in place (the dimensions and the measures, as
-- core's MetricSet.fingerprint() writes them); a stored row means exactly these, so migrate refuses another
-- fingerprint under the same name. definition: the whole resolved definition as last applied, for people (ratios,
-- window, rollups, attribution and tolerance may change in place). removed_at: the set is no longer declared (its
-- objects and rows are kept; declaring it again clears this).
CREATE TABLE metric_sets (
    name        text        PRIMARY KEY,
    fingerprint text        NOT NULL,
    definition  jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    removed_at  timestamptz
);

-- Every component reads it at start (MetricSetRegistry.check); only migrate, as the schema's owner, writes it.
GRANT SELECT ON metric_sets TO ${flyway:defaultSchema}_stream_role, ${flyway:defaultSchema}_batch_role,
    ${flyway:defaultSchema}_reconciler_role, ${flyway:defaultSchema}_finance_role;

-- Which sets a run computed (batch) or reconciled: its windows were replaced, or its corrections applied, for exactly
-- these. NULL on rows written before this migration: such a run was of the default set only.
ALTER TABLE batch_runs ADD COLUMN metric_sets text[];
ALTER TABLE reconciliation_runs ADD COLUMN metric_sets text[];

-- As V12's, counting only runs that reconciled the default set: a run of another set alone says nothing about the
-- default's windows. Each other set has its own (<set>__reconciled_ranges(), SetSchema). CREATE OR REPLACE keeps the
-- grants and the callers (the rollups, the reconciler).
CREATE OR REPLACE FUNCTION reconciled_ranges() RETURNS tstzmultirange
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(range_agg(tstzrange(r.range_from, r.range_to)), '{}'::tstzmultirange)
    FROM reconciliation_runs r
    WHERE r.status = 'succeeded' AND NOT r.dry_run AND r.batch_run_id IS NULL
      AND (r.metric_sets IS NULL OR 'default' = ANY (r.metric_sets))
$$;
