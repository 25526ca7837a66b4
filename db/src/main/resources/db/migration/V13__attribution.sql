-- Impression-click attribution (core's AttributionRule; docs/contract.md, "Attribution"): per window of the click or
-- conversion and its campaign and channel, attributed clicks, attributed conversions, unattributed clicks and the
-- attributed spend (the cost of the attributed clicks and conversions), computed by the stream job and recomputed by
-- the batch layer like the window metrics, diffed and corrected by the reconciler. Conventions as V2, V3, V8: counts
-- bigint, spend numeric(38,0), every value non-negative, grants to this schema's scoped roles (V10).

-- What the streaming job computed. Written only by the stream job, by idempotent upsert with a guard like
-- stream_window_metrics': a row is replaced only by a higher revision that holds no fewer clicks and conversions
-- (within one run of a window, decisions only ever move clicks from unattributed to attributed and add new ones).
CREATE TABLE stream_attribution_metrics (
    window_start             timestamptz   NOT NULL,
    window_end               timestamptz   NOT NULL,
    campaign_id              text          NOT NULL,
    channel_id               text          NOT NULL,
    attributed_clicks        bigint        NOT NULL CHECK (attributed_clicks >= 0),
    attributed_conversions   bigint        NOT NULL CHECK (attributed_conversions >= 0),
    unattributed_clicks      bigint        NOT NULL CHECK (unattributed_clicks >= 0),
    attributed_spend_micros  numeric(38,0) NOT NULL CHECK (attributed_spend_micros >= 0),
    revision                 integer       NOT NULL CHECK (revision >= 1),
    updated_at               timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (window_start, campaign_id, channel_id),
    CHECK (window_end > window_start)
);
CREATE INDEX stream_attribution_metrics_window_end ON stream_attribution_metrics (window_end);

-- What the batch layer recomputed from the lake. Replaced range by range in one transaction, with the window metrics
-- of the same run.
CREATE TABLE batch_attribution_metrics (
    window_start             timestamptz   NOT NULL,
    window_end               timestamptz   NOT NULL,
    campaign_id              text          NOT NULL,
    channel_id               text          NOT NULL,
    attributed_clicks        bigint        NOT NULL CHECK (attributed_clicks >= 0),
    attributed_conversions   bigint        NOT NULL CHECK (attributed_conversions >= 0),
    unattributed_clicks      bigint        NOT NULL CHECK (unattributed_clicks >= 0),
    attributed_spend_micros  numeric(38,0) NOT NULL CHECK (attributed_spend_micros >= 0),
    run_id                   bigint        NOT NULL REFERENCES batch_runs (run_id),
    computed_at              timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (window_start, campaign_id, channel_id),
    CHECK (window_end > window_start)
);
CREATE INDEX batch_attribution_metrics_run ON batch_attribution_metrics (run_id);

-- As batch_window_metrics_staging: loaded from many connections, moved in one transaction; UNLOGGED, disposable.
CREATE UNLOGGED TABLE batch_attribution_metrics_staging (
    run_id                   bigint        NOT NULL,
    window_start             timestamptz   NOT NULL,
    window_end               timestamptz   NOT NULL,
    campaign_id              text          NOT NULL,
    channel_id               text          NOT NULL,
    attributed_clicks        bigint        NOT NULL,
    attributed_conversions   bigint        NOT NULL,
    unattributed_clicks      bigint        NOT NULL,
    attributed_spend_micros  numeric(38,0) NOT NULL
);
CREATE INDEX batch_attribution_metrics_staging_run ON batch_attribution_metrics_staging (run_id, window_start, campaign_id, channel_id);

-- Per-key differences of one reconciliation run, as reconciliation_diffs; NULL metric columns mean "no row on that
-- side".
CREATE TABLE attribution_diffs (
    run_id                          bigint      NOT NULL REFERENCES reconciliation_runs (run_id),
    window_start                    timestamptz NOT NULL,
    window_end                      timestamptz NOT NULL,
    campaign_id                     text        NOT NULL,
    channel_id                      text        NOT NULL,
    status                          text        NOT NULL
                                    CHECK (status IN ('match', 'mismatch', 'missing_in_stream', 'missing_in_batch')),
    within_tolerance                boolean     NOT NULL,
    stream_revision                 integer,
    stream_attributed_clicks        bigint,        batch_attributed_clicks        bigint,
    stream_attributed_conversions   bigint,        batch_attributed_conversions   bigint,
    stream_unattributed_clicks      bigint,        batch_unattributed_clicks      bigint,
    stream_attributed_spend_micros  numeric(38,0), batch_attributed_spend_micros  numeric(38,0),
    PRIMARY KEY (run_id, window_start, campaign_id, channel_id)
);

-- The finalized value of each key, as window_corrections: batch wins for closed windows; `removed` hides a key the
-- stream had and the batch layer does not. No foreign keys, for the reason V11 dropped window_corrections'.
CREATE TABLE attribution_corrections (
    window_start             timestamptz   NOT NULL,
    window_end               timestamptz   NOT NULL,
    campaign_id              text          NOT NULL,
    channel_id               text          NOT NULL,
    attributed_clicks        bigint        NOT NULL CHECK (attributed_clicks >= 0),
    attributed_conversions   bigint        NOT NULL CHECK (attributed_conversions >= 0),
    unattributed_clicks      bigint        NOT NULL CHECK (unattributed_clicks >= 0),
    attributed_spend_micros  numeric(38,0) NOT NULL CHECK (attributed_spend_micros >= 0),
    removed                  boolean       NOT NULL DEFAULT false,
    reconciliation_run_id    bigint        NOT NULL,
    batch_run_id             bigint,
    finalized_at             timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (window_start, campaign_id, channel_id)
);

-- Attribution corrections go to the one append-only audit trail, under their own metric names.
ALTER TABLE correction_log DROP CONSTRAINT correction_log_metric_check;
ALTER TABLE correction_log ADD CONSTRAINT correction_log_metric_check
    CHECK (metric IN ('impressions', 'clicks', 'conversions', 'spend_micros', 'events', 'attributed_clicks',
                      'attributed_conversions', 'unattributed_clicks', 'attributed_spend_micros'));

-- The serving view of attribution, in the order of window_metrics (V5): finalized, else the stream's, else the
-- batch layer's.
CREATE VIEW attribution_metrics AS
SELECT c.window_start, c.window_end, c.campaign_id, c.channel_id,
       c.attributed_clicks, c.attributed_conversions, c.unattributed_clicks, c.attributed_spend_micros,
       'batch'::text AS source, true AS is_final, c.finalized_at AS updated_at
FROM attribution_corrections c
WHERE NOT c.removed
UNION ALL
SELECT s.window_start, s.window_end, s.campaign_id, s.channel_id,
       s.attributed_clicks, s.attributed_conversions, s.unattributed_clicks, s.attributed_spend_micros,
       'stream'::text, false, s.updated_at
FROM stream_attribution_metrics s
WHERE NOT EXISTS (SELECT 1 FROM attribution_corrections c
                  WHERE c.window_start = s.window_start AND c.campaign_id = s.campaign_id
                    AND c.channel_id = s.channel_id)
UNION ALL
SELECT b.window_start, b.window_end, b.campaign_id, b.channel_id,
       b.attributed_clicks, b.attributed_conversions, b.unattributed_clicks, b.attributed_spend_micros,
       'batch'::text, false, b.computed_at
FROM batch_attribution_metrics b
WHERE NOT EXISTS (SELECT 1 FROM attribution_corrections c
                  WHERE c.window_start = b.window_start AND c.campaign_id = b.campaign_id
                    AND c.channel_id = b.channel_id)
  AND NOT EXISTS (SELECT 1 FROM stream_attribution_metrics s
                  WHERE s.window_start = b.window_start AND s.campaign_id = b.campaign_id
                    AND s.channel_id = b.channel_id);

-- Privileges: as the window metrics' (V10), role by role, on this schema's scoped roles only.
GRANT SELECT, INSERT, UPDATE ON stream_attribution_metrics TO ${flyway:defaultSchema}_stream_role;

GRANT SELECT, INSERT, UPDATE, DELETE ON batch_attribution_metrics, batch_attribution_metrics_staging
    TO ${flyway:defaultSchema}_batch_role;

GRANT SELECT ON stream_attribution_metrics, batch_attribution_metrics, attribution_metrics
    TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT, INSERT, UPDATE, DELETE ON attribution_diffs TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT, INSERT, UPDATE ON attribution_corrections TO ${flyway:defaultSchema}_reconciler_role;

GRANT SELECT ON attribution_metrics, attribution_diffs TO ${flyway:defaultSchema}_finance_role;
