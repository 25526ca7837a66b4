-- The batch layer refuses to recompute a range whose stream rows have another window size than its own (stream and
-- batch rows are compared key by key; a stream run with --window 2m next to a 1-minute batch would make every key a
-- mismatch). It reads only window_start and window_end of the stream's rows for that, but PostgreSQL grants per
-- table (or per column): per column, so the batch login still cannot read the stream's numbers.
GRANT SELECT (window_start, window_end) ON stream_window_metrics TO ${flyway:defaultSchema}_batch_role;
