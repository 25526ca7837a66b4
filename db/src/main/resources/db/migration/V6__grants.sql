-- Least privilege (issue 2): each writer writes only its own tables; finance reads results only.
-- Nobody is granted UPDATE, DELETE or TRUNCATE on correction_log (and a trigger refuses them anyway).
GRANT USAGE ON SCHEMA ${flyway:defaultSchema}
    TO recount_stream, recount_batch, recount_reconciler, recount_finance;

GRANT SELECT, INSERT, UPDATE ON stream_window_metrics, stream_progress TO recount_stream;

GRANT SELECT, INSERT, UPDATE ON batch_runs TO recount_batch;
GRANT SELECT, INSERT, UPDATE, DELETE ON batch_window_metrics, batch_window_metrics_staging TO recount_batch;
GRANT USAGE, SELECT ON SEQUENCE batch_runs_run_id_seq TO recount_batch;
-- The completeness boundary is recorded by the stream job; batch only reads it.
GRANT SELECT ON stream_progress TO recount_batch;

GRANT SELECT ON stream_window_metrics, batch_window_metrics, batch_runs, stream_progress TO recount_reconciler;
GRANT SELECT, INSERT, UPDATE ON reconciliation_runs TO recount_reconciler;
GRANT SELECT, INSERT, UPDATE, DELETE ON reconciliation_diffs TO recount_reconciler;
GRANT SELECT, INSERT, UPDATE ON window_corrections TO recount_reconciler;
GRANT SELECT, INSERT ON correction_log TO recount_reconciler;
GRANT SELECT ON window_metrics TO recount_reconciler;
GRANT USAGE, SELECT ON SEQUENCE reconciliation_runs_run_id_seq, correction_log_log_id_seq TO recount_reconciler;

GRANT SELECT ON window_metrics, reconciliation_runs, reconciliation_diffs, correction_log TO recount_finance;
