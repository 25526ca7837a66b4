-- What the last applied reconciliation of each window saw and left behind, so that a rerun can tell, per window and
-- without joining keys, whether anything changed since: per side (the stream's rows, the batch's rows, the finalized
-- rows in window_corrections), the window's key count and a fingerprint, the XOR of a 64-bit hash of every row
-- (key, window end, metrics; the stream's revision; the correction's removed flag). A window whose three pairs are
-- the ones recorded here is exactly as that run left it: its corrections are still final, nothing is to be logged,
-- and its differences are the diffs of reconciliation_run_id, which a rerun copies instead of recomputing. Any change
-- to a row (an upsert, a backfill, a deletion, a hand edit) changes its window's fingerprint or count, and the
-- window is reconciled key by key again. One row per window ever reconciled (1,440 a day of 1-minute windows).
CREATE TABLE reconciled_windows (
    window_start          timestamptz PRIMARY KEY,
    stream_keys           bigint      NOT NULL,
    stream_fingerprint    bigint      NOT NULL,
    batch_keys            bigint      NOT NULL,
    batch_fingerprint     bigint      NOT NULL,
    final_keys            bigint      NOT NULL,
    final_fingerprint     bigint      NOT NULL,
    reconciliation_run_id bigint      NOT NULL REFERENCES reconciliation_runs (run_id),
    reconciled_at         timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT, UPDATE ON reconciled_windows TO ${flyway:defaultSchema}_reconciler_role;
