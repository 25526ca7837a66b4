-- Spend becomes exact: numeric(38,0) (core's Metric.SPEND_SQL_TYPE) wherever a spend value is stored. One event
-- may cost up to 2^63 - 1 micros, so a window's spend does not fit bigint: two such events overflowed the
-- stream job's sums, and a bigint sum could wrap. Counts stay bigint (2^63 events in a window cannot happen).
-- correction_log holds any metric's value, so its before/after columns take the wider type too.
--
-- Changing a column's type rewrites the table under an ACCESS EXCLUSIVE lock (writers wait until this
-- migration commits). CHECK (spend_micros >= 0) and the indexes carry over to the new type.

-- The serving view selects these columns, and a column a view uses cannot change type: drop the view, change
-- the columns, recreate it exactly as V5 defined it, and grant again what V6 granted on it.
DROP VIEW window_metrics;

ALTER TABLE stream_window_metrics ALTER COLUMN spend_micros TYPE numeric(38,0);
ALTER TABLE batch_window_metrics ALTER COLUMN spend_micros TYPE numeric(38,0);
ALTER TABLE batch_window_metrics_staging ALTER COLUMN spend_micros TYPE numeric(38,0);
ALTER TABLE window_corrections ALTER COLUMN spend_micros TYPE numeric(38,0);
ALTER TABLE reconciliation_diffs
    ALTER COLUMN stream_spend_micros TYPE numeric(38,0),
    ALTER COLUMN batch_spend_micros TYPE numeric(38,0);
-- A table rewrite fires no row triggers: the append-only trigger neither blocks nor sees this.
ALTER TABLE correction_log
    ALTER COLUMN before_value TYPE numeric(38,0),
    ALTER COLUMN after_value TYPE numeric(38,0);

-- As in V5: for each window key, in order: finalized (batch value, is_final; hidden if removed), else the
-- stream's value, else a key only the batch layer has (not yet reconciled).
CREATE VIEW window_metrics AS
SELECT c.window_start, c.window_end, c.campaign_id, c.channel_id,
       c.impressions, c.clicks, c.conversions, c.spend_micros, c.events,
       'batch'::text AS source, true AS is_final, c.finalized_at AS updated_at
FROM window_corrections c
WHERE NOT c.removed
UNION ALL
SELECT s.window_start, s.window_end, s.campaign_id, s.channel_id,
       s.impressions, s.clicks, s.conversions, s.spend_micros, s.events,
       'stream'::text, false, s.updated_at
FROM stream_window_metrics s
WHERE NOT EXISTS (SELECT 1 FROM window_corrections c
                  WHERE c.window_start = s.window_start AND c.campaign_id = s.campaign_id
                    AND c.channel_id = s.channel_id)
UNION ALL
SELECT b.window_start, b.window_end, b.campaign_id, b.channel_id,
       b.impressions, b.clicks, b.conversions, b.spend_micros, b.events,
       'batch'::text, false, b.computed_at
FROM batch_window_metrics b
WHERE NOT EXISTS (SELECT 1 FROM window_corrections c
                  WHERE c.window_start = b.window_start AND c.campaign_id = b.campaign_id
                    AND c.channel_id = b.channel_id)
  AND NOT EXISTS (SELECT 1 FROM stream_window_metrics s
                  WHERE s.window_start = b.window_start AND s.campaign_id = b.campaign_id
                    AND s.channel_id = b.channel_id);

GRANT SELECT ON window_metrics TO recount_reconciler, recount_finance;
