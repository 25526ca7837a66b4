-- What a restart of the stream job must know about its own commits, and what PostgreSQL refused to store.

-- The chain of runs (lineage) whose checkpoint stream_progress.checkpoint_id counts in. A start that would
-- resume from a snapshot at or before that checkpoint of the same lineage is refused: the outputs of a later
-- checkpoint are committed already, and replaying from the older one would count events twice.
ALTER TABLE stream_progress ADD COLUMN lineage text;

-- Window results that PostgreSQL refused for their content (a data exception or constraint violation) although
-- validation let their events through. The stream job commits every other row, records each refused one here in
-- the same transaction (once: row_key is the window key and revision), and publishes it to the dead-letter topic.
-- row_json escapes every non-ASCII character, so even the content that was refused can be stored.
CREATE TABLE stream_rejected_rows (
    rejection_id  bigserial   PRIMARY KEY,
    row_key       text        NOT NULL UNIQUE,
    row_json      text        NOT NULL,
    sql_state     text,
    error         text        NOT NULL,
    rejected_at   timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT ON stream_rejected_rows TO recount_stream;
GRANT USAGE, SELECT ON SEQUENCE stream_rejected_rows_rejection_id_seq TO recount_stream;
GRANT SELECT ON stream_rejected_rows TO recount_reconciler, recount_finance;
