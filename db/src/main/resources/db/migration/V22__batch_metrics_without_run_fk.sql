-- batch_window_metrics and batch_attribution_metrics hold one row per window key a batch run computed: a day's first
-- backfill inserts about a million of them, and a run that changes every value updates as many. Each such row paid
-- a lookup of its run in batch_runs (the foreign key's row-by-row check) and an entry in the run_id index. The index
-- had one reader, `reconcile --batch-run` for an `affected` run, which now reads the run's windows from what the run
-- recorded (batch_runs.details): a row keeps the run that last changed it, so the rows cannot name a run's windows.
-- The reference holds by construction, as window_corrections' (V11): the batch job writes only its own run id, whose
-- batch_runs row is committed before it stages any row, and no role may delete a batch run.
-- Only drops a constraint and an index per table: no table is rewritten.
ALTER TABLE batch_window_metrics DROP CONSTRAINT batch_window_metrics_run_id_fkey;
DROP INDEX batch_window_metrics_run;
ALTER TABLE batch_attribution_metrics DROP CONSTRAINT batch_attribution_metrics_run_id_fkey;
DROP INDEX batch_attribution_metrics_run;
