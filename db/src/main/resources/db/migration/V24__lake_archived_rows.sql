-- How many rows the stream job archived into each hour of the lake, so that the batch layer can tell a lake that
-- lost files from one that is complete. Without it, "batch wins" would make final whatever a damaged lake still
-- holds: a deleted or unreadable Parquet file lowers every window it held, silently, in finance's numbers.
--
-- A row here says: the files of one of the stream's commits hold `rows` rows of the hour starting at `event_hour`
-- (the folder event_date=YYYY-MM-DD/event_hour=HH, UTC). The stream counts the events it hands to the lake writer
-- between two checkpoints and writes the counts once that checkpoint completes, as the lake writer renames its
-- files: both commit the same checkpoint's events, each on its own, so for an instant one may be visible before
-- the other. `commit_id` is drawn once per writer and checkpoint and travels with the checkpoint, so a commit
-- repeated after a restart inserts nothing (ON CONFLICT DO NOTHING).
--
-- Compaction keeps every row, so an hour's lake rows never fall below the sum here unless files were lost. An hour
-- may hold more (files written before this table, or by hand); only fewer is a loss.
CREATE TABLE lake_archived_rows (
    commit_id    uuid        NOT NULL,
    event_hour   timestamptz NOT NULL CHECK (extract(epoch FROM event_hour)::bigint % 3600 = 0),
    rows         bigint      NOT NULL CHECK (rows > 0),
    committed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (commit_id, event_hour)
);

CREATE INDEX lake_archived_rows_hour ON lake_archived_rows (event_hour);

-- SELECT too: ON CONFLICT (commit_id, event_hour) reads the conflict target's columns.
GRANT SELECT, INSERT ON lake_archived_rows TO ${flyway:defaultSchema}_stream_role;
-- The batch reads it before it recomputes from the lake, and forgets the hours its retention deletes from the lake.
GRANT SELECT, DELETE ON lake_archived_rows TO ${flyway:defaultSchema}_batch_role;
