-- One row per batch run, whatever its outcome, so a failed nightly is visible.
CREATE TABLE batch_runs (
    run_id           bigserial   PRIMARY KEY,
    mode             text        NOT NULL CHECK (mode IN ('range', 'affected', 'nightly')),
    range_from       timestamptz,
    range_to         timestamptz,
    status           text        NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    forced           boolean     NOT NULL DEFAULT false,
    events_read      bigint,
    windows_written  bigint,
    windows_deleted  bigint,
    -- For `affected`: the windows it recomputed and the backfill offsets it committed.
    details          jsonb,
    started_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    error            text,
    CHECK (range_to IS NULL OR range_from IS NULL OR range_to > range_from)
);
CREATE INDEX batch_runs_range ON batch_runs (range_from, range_to);

-- What the batch layer recomputed from the lake (CONTRACT §4). Replaced range by range in one transaction.
CREATE TABLE batch_window_metrics (
    window_start  timestamptz NOT NULL,
    window_end    timestamptz NOT NULL,
    campaign_id   text        NOT NULL,
    channel_id    text        NOT NULL,
    impressions   bigint      NOT NULL CHECK (impressions >= 0),
    clicks        bigint      NOT NULL CHECK (clicks >= 0),
    conversions   bigint      NOT NULL CHECK (conversions >= 0),
    spend_micros  bigint      NOT NULL CHECK (spend_micros >= 0),
    events        bigint      NOT NULL CHECK (events >= 0),
    run_id        bigint      NOT NULL REFERENCES batch_runs (run_id),
    computed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (window_start, campaign_id, channel_id),
    CHECK (window_end > window_start)
);
CREATE INDEX batch_window_metrics_run ON batch_window_metrics (run_id);

-- Spark's JDBC writer loads a run's rows here from many connections (not one transaction); the run then
-- moves them into batch_window_metrics in ONE transaction, so a crash mid-load leaves the previous result.
-- UNLOGGED: staging rows are disposable, and skipping the WAL halves the load cost.
CREATE UNLOGGED TABLE batch_window_metrics_staging (
    run_id        bigint      NOT NULL,
    window_start  timestamptz NOT NULL,
    window_end    timestamptz NOT NULL,
    campaign_id   text        NOT NULL,
    channel_id    text        NOT NULL,
    impressions   bigint      NOT NULL,
    clicks        bigint      NOT NULL,
    conversions   bigint      NOT NULL,
    spend_micros  bigint      NOT NULL,
    events        bigint      NOT NULL
);
CREATE INDEX batch_window_metrics_staging_run ON batch_window_metrics_staging (run_id);
