-- `reconcile --dry-run` records its run (its diffs and report are real) but applies nothing: no corrections, no
-- correction log entries, nothing the serving view shows changes. Such a run never counts as having reconciled
-- its range (nightly-dates ignores it).
ALTER TABLE reconciliation_runs ADD COLUMN dry_run boolean NOT NULL DEFAULT false;

-- window_corrections holds one row per reconciled key: the first run over a day inserts every key of that day (a
-- million rows for 100 campaigns x 7 channels of 1-minute windows). Its two foreign keys cost two row-by-row
-- lookups per inserted row, a third of such a run. Both references hold by construction instead: the reconciler
-- writes its own run id (its row is committed before its corrections) and the batch run id it read from
-- batch_window_metrics in the same snapshot (whose own foreign key guarantees that run); and no role may delete a
-- run of either table. correction_log and reconciliation_diffs keep theirs: they grow by changes, not by keys.
ALTER TABLE window_corrections
    DROP CONSTRAINT window_corrections_reconciliation_run_id_fkey,
    DROP CONSTRAINT window_corrections_batch_run_id_fkey;
