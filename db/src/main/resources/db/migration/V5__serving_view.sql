-- The serving contract (CONTRACT §4) that dashboards and finance read. For each window key, in order:
--   1. a reconciliation finalized it: the batch value, source 'batch', is_final (hidden if `removed`);
--   2. otherwise the stream's value, source 'stream';
--   3. otherwise a key only the batch layer has (not yet reconciled): source 'batch', not final.
-- A stream re-firing after finalization changes stream_window_metrics only, never what this view shows.
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
