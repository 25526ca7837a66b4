-- What the streaming job computed (CONTRACT §4). Written only by the stream job, by idempotent upsert:
-- a row is replaced only by a higher or equal revision, so a replay of an older firing cannot win.
CREATE TABLE stream_window_metrics (
    window_start  timestamptz NOT NULL,
    window_end    timestamptz NOT NULL,
    campaign_id   text        NOT NULL,
    channel_id    text        NOT NULL,
    impressions   bigint      NOT NULL CHECK (impressions >= 0),
    clicks        bigint      NOT NULL CHECK (clicks >= 0),
    conversions   bigint      NOT NULL CHECK (conversions >= 0),
    spend_micros  bigint      NOT NULL CHECK (spend_micros >= 0),
    events        bigint      NOT NULL CHECK (events >= 0),
    revision      integer     NOT NULL CHECK (revision >= 1),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (window_start, campaign_id, channel_id),
    CHECK (window_end > window_start)
);
CREATE INDEX stream_window_metrics_window_end ON stream_window_metrics (window_end);

-- How far in event time the raw event lake is complete: the watermark as of the last checkpoint whose
-- lake files are committed. The batch layer refuses ranges beyond it (unless --force).
CREATE TABLE stream_progress (
    job_name             text        PRIMARY KEY,
    lake_complete_until  timestamptz NOT NULL,
    checkpoint_id        bigint      NOT NULL,
    updated_at           timestamptz NOT NULL DEFAULT now()
);
