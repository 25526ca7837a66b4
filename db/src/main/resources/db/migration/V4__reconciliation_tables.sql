-- One row per reconciliation run: its range, verdict and counts; totals as JSON for the report.
CREATE TABLE reconciliation_runs (
    run_id                  bigserial   PRIMARY KEY,
    range_from              timestamptz NOT NULL,
    range_to                timestamptz NOT NULL,
    batch_run_id            bigint      REFERENCES batch_runs (run_id),
    status                  text        NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    verdict                 text        CHECK (verdict IN ('within_tolerance', 'beyond_tolerance')),
    keys_compared           bigint,
    keys_matched            bigint,
    keys_mismatched         bigint,
    keys_missing_in_stream  bigint,
    keys_missing_in_batch   bigint,
    values_corrected        bigint,
    totals                  jsonb,
    report_dir              text,
    started_at              timestamptz NOT NULL DEFAULT now(),
    finished_at             timestamptz,
    error                   text,
    CHECK (range_to > range_from)
);

-- Per-key differences of one run: every key whose stream and batch values are not identical.
-- NULL metric columns mean "no row on that side".
CREATE TABLE reconciliation_diffs (
    run_id               bigint      NOT NULL REFERENCES reconciliation_runs (run_id),
    window_start         timestamptz NOT NULL,
    window_end           timestamptz NOT NULL,
    campaign_id          text        NOT NULL,
    channel_id           text        NOT NULL,
    status               text        NOT NULL
                         CHECK (status IN ('match', 'mismatch', 'missing_in_stream', 'missing_in_batch')),
    within_tolerance     boolean     NOT NULL,
    stream_revision      integer,
    stream_impressions   bigint, batch_impressions   bigint,
    stream_clicks        bigint, batch_clicks        bigint,
    stream_conversions   bigint, batch_conversions   bigint,
    stream_spend_micros  bigint, batch_spend_micros  bigint,
    stream_events        bigint, batch_events        bigint,
    PRIMARY KEY (run_id, window_start, campaign_id, channel_id)
);

-- The finalized (reconciled) value of each key: batch wins for closed windows. `removed` marks a key the
-- stream had but the batch recomputation did not (it has no events), so the serving view hides it.
CREATE TABLE window_corrections (
    window_start          timestamptz NOT NULL,
    window_end            timestamptz NOT NULL,
    campaign_id           text        NOT NULL,
    channel_id            text        NOT NULL,
    impressions           bigint      NOT NULL CHECK (impressions >= 0),
    clicks                bigint      NOT NULL CHECK (clicks >= 0),
    conversions           bigint      NOT NULL CHECK (conversions >= 0),
    spend_micros          bigint      NOT NULL CHECK (spend_micros >= 0),
    events                bigint      NOT NULL CHECK (events >= 0),
    removed               boolean     NOT NULL DEFAULT false,
    reconciliation_run_id bigint      NOT NULL REFERENCES reconciliation_runs (run_id),
    batch_run_id          bigint      REFERENCES batch_runs (run_id),
    finalized_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (window_start, campaign_id, channel_id)
);

-- Append-only audit trail: one row per metric value that a reconciliation changed in window_metrics.
CREATE TABLE correction_log (
    log_id                bigserial   PRIMARY KEY,
    reconciliation_run_id bigint      NOT NULL REFERENCES reconciliation_runs (run_id),
    window_start          timestamptz NOT NULL,
    campaign_id           text        NOT NULL,
    channel_id            text        NOT NULL,
    metric                text        NOT NULL
                          CHECK (metric IN ('impressions', 'clicks', 'conversions', 'spend_micros', 'events')),
    before_value          bigint,
    after_value           bigint,
    reason                text        NOT NULL,
    logged_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX correction_log_key ON correction_log (window_start, campaign_id, channel_id);

-- Privileges alone do not bind the table owner or a superuser; this trigger does (short of disabling
-- triggers, which itself needs ownership and leaves a trace in the server log).
CREATE FUNCTION correction_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'correction_log is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER correction_log_no_update_delete
    BEFORE UPDATE OR DELETE ON correction_log
    FOR EACH ROW EXECUTE FUNCTION correction_log_is_append_only();
CREATE TRIGGER correction_log_no_truncate
    BEFORE TRUNCATE ON correction_log
    FOR EACH STATEMENT EXECUTE FUNCTION correction_log_is_append_only();
