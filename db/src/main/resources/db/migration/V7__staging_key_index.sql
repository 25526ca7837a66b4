-- replaceFromStaging's "delete vanished keys" probes staging by full key. The staging table's statistics
-- describe the previous run, so the planner may pick a nested loop; with only a run_id index that loop is
-- quadratic (minutes at 720k rows). A key index keeps every plan an index probe.
CREATE INDEX batch_window_metrics_staging_key
    ON batch_window_metrics_staging (run_id, window_start, campaign_id, channel_id);
