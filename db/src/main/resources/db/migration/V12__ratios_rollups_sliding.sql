-- What finance reads besides the five sums: ratios, hourly and daily totals, and sliding sums over the last minutes
-- (CONTRACT §4). All of it is computed from the minute sums at read time: a ratio is never summed or averaged across
-- windows, a rollup's ratio is the ratio of its sums, and nothing here is stored twice (so nothing can disagree with
-- window_metrics). docs/benchmarks.md, "Rollups at a year of data", measures why functions over the view suffice.

-- ---- Ratios ------------------------------------------------------------------------------------------------------
-- Defined once; window_metrics, the rollups and the sliding sums call these (and core's Ratio is the same rule in
-- Java, for the report). The value is the exact quotient rounded half up to 12 decimal places, as a numeric of scale
-- 12: computed with integer division (div) of exact integers, so it never depends on PostgreSQL's choice of a
-- division scale (numeric / numeric keeps only about 16 significant digits, and no decimals at all for a quotient
-- of 38 digits) and is the same digits as Java's BigDecimal.divide(d, 12, HALF_UP). NULL where the denominator is
-- 0. Arguments are never negative (the tables' CHECKs). Money ratios are in micro-units, like spend_micros.
CREATE FUNCTION exact_ratio(numerator numeric, denominator numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT div(2 * numerator * 1000000000000 + denominator, 2 * NULLIF(denominator, 0)) * 0.000000000001 $$;
CREATE FUNCTION ctr(clicks numeric, impressions numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT exact_ratio(clicks, impressions) $$;
CREATE FUNCTION cvr(conversions numeric, clicks numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT exact_ratio(conversions, clicks) $$;
CREATE FUNCTION cpc_micros(spend_micros numeric, clicks numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT exact_ratio(spend_micros, clicks) $$;
-- Per 1000 impressions.
CREATE FUNCTION cpm_micros(spend_micros numeric, impressions numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT exact_ratio(spend_micros * 1000, impressions) $$;
CREATE FUNCTION cost_per_conversion_micros(spend_micros numeric, conversions numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT exact_ratio(spend_micros, conversions) $$;

-- window_metrics keeps its columns, in order, and gains the ratios at the end (CREATE OR REPLACE keeps its grants).
-- The rows are exactly V8's.
CREATE OR REPLACE VIEW window_metrics AS
SELECT u.*,
       ctr(u.clicks, u.impressions) AS ctr,
       cvr(u.conversions, u.clicks) AS cvr,
       cpc_micros(u.spend_micros, u.clicks) AS cpc_micros,
       cpm_micros(u.spend_micros, u.impressions) AS cpm_micros,
       cost_per_conversion_micros(u.spend_micros, u.conversions) AS cost_per_conversion_micros
FROM (
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
                        AND s.channel_id = b.channel_id)
) u;

-- Campaign over time is what finance asks ("campaign X, last 90 days"): an index per source table so such a query
-- reads that campaign's windows, not every campaign's. (A plain CREATE INDEX blocks writes to the table while it is
-- built: run this migration when the stream job and backfills are stopped, as every migration so far.)
CREATE INDEX stream_window_metrics_campaign ON stream_window_metrics (campaign_id, window_start);
CREATE INDEX batch_window_metrics_campaign ON batch_window_metrics (campaign_id, window_start);
CREATE INDEX window_corrections_campaign ON window_corrections (campaign_id, window_start);

-- ---- Settings the read side needs ----------------------------------------------------------------------------
-- The time zone of days (and of hours, for zones with half-hour offsets): the setting `time-zone`, which every
-- applied reconcile run records here (one row), so the database's days are the reconciler's and the report's.
CREATE TABLE serving_settings (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    -- A name PostgreSQL knows (an IANA name such as Europe/Berlin, or UTC); using an unknown one raises an error.
    time_zone  text    NOT NULL DEFAULT 'UTC' CHECK (now() AT TIME ZONE time_zone IS NOT NULL)
);
INSERT INTO serving_settings DEFAULT VALUES;

-- What succeeded, applied reconciliations have covered: the union of their ranges. Dry runs apply nothing, and runs
-- of one batch run (--batch-run) do not count: an `affected` run reconciles only some windows of its recorded range.
CREATE FUNCTION reconciled_ranges() RETURNS tstzmultirange
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(range_agg(tstzrange(r.range_from, r.range_to)), '{}'::tstzmultirange)
    FROM reconciliation_runs r
    WHERE r.status = 'succeeded' AND NOT r.dry_run AND r.batch_run_id IS NULL
$$;

-- The end of the period that starts at p_start: an hour (or minute) later in absolute time, so the repeated hour of
-- an autumn DST change is two hours, not one of two; a day (week, month) later in local time, so a day across a DST
-- change has 23 or 25 hours.
CREATE FUNCTION period_end(p_unit text, p_start timestamptz, p_zone text) RETURNS timestamptz
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_unit IN ('minute', 'hour') THEN p_start + ('1 ' || p_unit)::interval
                ELSE ((p_start AT TIME ZONE p_zone) + ('1 ' || p_unit)::interval) AT TIME ZONE p_zone END
$$;

-- Midnight at the start of p_day in the recorded time zone.
CREATE FUNCTION local_midnight(p_day date) RETURNS timestamptz
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_day::timestamp AT TIME ZONE (SELECT time_zone FROM serving_settings)
$$;

-- ---- Rollups -----------------------------------------------------------------------------------------------------
-- One row per period (hour or day in the recorded time zone), campaign and channel: the sums of the windows that
-- start in the period, the ratios of those sums, how many windows, and whether the period is final.
--
-- is_final: every window row in it is final AND succeeded, applied reconciliations cover the whole period. "Every
-- row final" alone is not enough: rows only exist where there were events, so an hour whose first half was
-- reconciled (all its rows final) and whose second half has no rows yet could still gain stream rows later. Once
-- reconciliation covered the period, a key without a row there has none in the batch either, and a stream row that
-- arrives later is not final, which the first condition catches.
--
-- Spend sums are numeric (exact integers that may exceed numeric(38,0) when many windows near its bound add up).
CREATE TYPE period_metrics_row AS (
    period_start timestamptz, period_end timestamptz, campaign_id text, channel_id text,
    impressions bigint, clicks bigint, conversions bigint, spend_micros numeric, events bigint,
    ctr numeric, cvr numeric, cpc_micros numeric, cpm_micros numeric, cost_per_conversion_micros numeric,
    windows bigint, is_final boolean);

-- The periods of p_unit ('hour' or 'day') that overlap [p_from, p_to), each whole (all its windows, also those
-- outside [p_from, p_to)). SQL functions of one SELECT like this one are inlined into the caller's query, so a
-- caller's `WHERE campaign_id = ...` reaches the window tables' campaign indexes; the bounds and the time zone are
-- scalar subqueries, evaluated once per query and usable as index bounds.
CREATE FUNCTION period_metrics(p_unit text, p_from timestamptz, p_to timestamptz) RETURNS SETOF period_metrics_row
    LANGUAGE sql STABLE AS $$
    SELECT g.period_start, g.period_end, g.campaign_id, g.channel_id,
           g.impressions, g.clicks, g.conversions, g.spend_micros, g.events,
           ctr(g.clicks, g.impressions), cvr(g.conversions, g.clicks), cpc_micros(g.spend_micros, g.clicks),
           cpm_micros(g.spend_micros, g.impressions), cost_per_conversion_micros(g.spend_micros, g.conversions),
           g.windows,
           g.rows_final AND (SELECT reconciled_ranges()) @> tstzrange(g.period_start, g.period_end)
    FROM (
        SELECT p.period_start, period_end(p_unit, p.period_start, (SELECT time_zone FROM serving_settings)) AS period_end,
               p.campaign_id, p.channel_id,
               sum(p.impressions)::bigint AS impressions, sum(p.clicks)::bigint AS clicks,
               sum(p.conversions)::bigint AS conversions, sum(p.spend_micros) AS spend_micros,
               sum(p.events)::bigint AS events, count(*) AS windows, bool_and(p.is_final) AS rows_final
        FROM (
            SELECT date_trunc(p_unit, m.window_start, (SELECT time_zone FROM serving_settings)) AS period_start, m.*
            FROM window_metrics m
            WHERE p_from < p_to
              AND m.window_start >= (SELECT date_trunc(p_unit, p_from, z.time_zone) FROM serving_settings z)
              AND m.window_start < (SELECT period_end(p_unit,
                                                     date_trunc(p_unit, p_to - interval '1 microsecond', z.time_zone),
                                                     z.time_zone)
                                    FROM serving_settings z)
        ) p
        GROUP BY p.period_start, p.campaign_id, p.channel_id
    ) g
$$;

-- Hours overlapping [p_from, p_to): in the recorded time zone (only zones with a fractional offset, such as
-- Asia/Kolkata, have hours that do not start on a UTC hour).
CREATE FUNCTION hourly_metrics(p_from timestamptz, p_to timestamptz) RETURNS SETOF period_metrics_row
    LANGUAGE sql STABLE AS $$ SELECT * FROM period_metrics('hour', p_from, p_to) $$;
-- Days p_from up to p_to (exclusive), each midnight to midnight in the recorded time zone (23 or 25 hours on a
-- daylight-saving day).
CREATE FUNCTION daily_metrics(p_from date, p_to date) RETURNS SETOF period_metrics_row
    LANGUAGE sql STABLE AS $$ SELECT * FROM period_metrics('day', local_midnight(p_from), local_midnight(p_to)) $$;

-- ---- Sliding sums ------------------------------------------------------------------------------------------------
-- The last N minutes, advancing every minute, per campaign and channel: for every whole minute e in (p_from, p_to]
-- at which the key has a window starting in [e - N minutes, e), the sums of those windows. Exact: 1-minute windows
-- compose, so the sum of N of them is the N-minute total (with longer windows, those starting in the last N minutes
-- count whole). Each window adds to the N ends after its start: one pass, no self-join, and a caller's
-- `WHERE campaign_id = ...` reaches the campaign indexes. is_final: as for rollups, over [e - N minutes, e).
CREATE FUNCTION sliding_metrics(p_minutes integer, p_from timestamptz, p_to timestamptz)
    RETURNS TABLE (window_end timestamptz, campaign_id text, channel_id text,
                   impressions bigint, clicks bigint, conversions bigint, spend_micros numeric, events bigint,
                   ctr numeric, cvr numeric, cpc_micros numeric, cpm_micros numeric,
                   cost_per_conversion_micros numeric, windows bigint, is_final boolean)
    LANGUAGE sql STABLE AS $$
    SELECT g.window_end, g.campaign_id, g.channel_id,
           g.impressions, g.clicks, g.conversions, g.spend_micros, g.events,
           ctr(g.clicks, g.impressions), cvr(g.conversions, g.clicks), cpc_micros(g.spend_micros, g.clicks),
           cpm_micros(g.spend_micros, g.impressions), cost_per_conversion_micros(g.spend_micros, g.conversions),
           g.windows,
           g.rows_final AND (SELECT reconciled_ranges())
               @> tstzrange(g.window_end - make_interval(mins => p_minutes), g.window_end)
    FROM (
        SELECT e.window_end, m.campaign_id, m.channel_id,
               sum(m.impressions)::bigint AS impressions, sum(m.clicks)::bigint AS clicks,
               sum(m.conversions)::bigint AS conversions, sum(m.spend_micros) AS spend_micros,
               sum(m.events)::bigint AS events, count(*) AS windows, bool_and(m.is_final) AS rows_final
        FROM window_metrics m
        CROSS JOIN LATERAL generate_series(date_trunc('minute', m.window_start) + interval '1 minute',
                                           m.window_start + make_interval(mins => p_minutes),
                                           interval '1 minute') AS e(window_end)
        WHERE m.window_start >= date_trunc('minute', p_from) - make_interval(mins => p_minutes)
          AND m.window_start < p_to
          AND e.window_end > p_from AND e.window_end <= p_to
        GROUP BY e.window_end, m.campaign_id, m.channel_id
    ) g
$$;

-- The default sliding view: the last 5 minutes, at every minute of the last hour.
CREATE VIEW recent_sliding_metrics AS
SELECT * FROM sliding_metrics(5, date_trunc('minute', now()) - interval '1 hour', date_trunc('minute', now()));

-- ---- Who may use these: the schema's own roles (V10), as for window_metrics -------------------------------------
-- Functions are executable by everyone by default; here only by those who read window_metrics (its ratio columns
-- call the ratio functions, so reading it needs them).
REVOKE EXECUTE ON FUNCTION exact_ratio(numeric, numeric), ctr(numeric, numeric), cvr(numeric, numeric),
    cpc_micros(numeric, numeric), cpm_micros(numeric, numeric), cost_per_conversion_micros(numeric, numeric),
    reconciled_ranges(), period_end(text, timestamptz, text), local_midnight(date),
    period_metrics(text, timestamptz, timestamptz), hourly_metrics(timestamptz, timestamptz),
    daily_metrics(date, date), sliding_metrics(integer, timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION exact_ratio(numeric, numeric), ctr(numeric, numeric), cvr(numeric, numeric),
    cpc_micros(numeric, numeric), cpm_micros(numeric, numeric), cost_per_conversion_micros(numeric, numeric),
    reconciled_ranges(), period_end(text, timestamptz, text), local_midnight(date),
    period_metrics(text, timestamptz, timestamptz), hourly_metrics(timestamptz, timestamptz),
    daily_metrics(date, date), sliding_metrics(integer, timestamptz, timestamptz)
    TO ${flyway:defaultSchema}_reconciler_role, ${flyway:defaultSchema}_finance_role;

GRANT SELECT, UPDATE ON serving_settings TO ${flyway:defaultSchema}_reconciler_role;
GRANT SELECT ON serving_settings, recent_sliding_metrics
    TO ${flyway:defaultSchema}_finance_role, ${flyway:defaultSchema}_reconciler_role;
