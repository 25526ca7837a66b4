-- Backfill records that `backfill affected` (and `correct`, which runs it) could not settle yet: their event is not in
-- the lake yet, its window is beyond the lake's completeness boundary, or its lake hour holds fewer rows than the
-- stream archived into it. Such a record used to stay on the topic, and the consumer group's offset could not pass
-- it: every run read it and everything behind it again, and once more than `--max-records` records piled up behind
-- one that could never be settled (a window in an hour whose files were lost, a record naming an event that is in
-- no lake), later records were never reached at all.
--
-- Now a run moves such a record here, in the transaction that commits its results, and only then commits the
-- topic's offsets past everything it read. Every run checks the records here again, least recently checked first,
-- and deletes each in the transaction whose results include its event. A run that fails leaves the table and the
-- offsets as they were; a run whose offset commit fails reads the same records from the topic again, and the key
-- keeps one row per record.
CREATE TABLE backfill_waiting (
    topic           text        NOT NULL,
    kafka_partition integer     NOT NULL CHECK (kafka_partition >= 0),
    kafka_offset    bigint      NOT NULL CHECK (kafka_offset >= 0),
    -- The backfill record as the stream wrote it (BackfillRecord's JSON).
    record          text        NOT NULL,
    -- Why the last run that checked it could not settle it.
    reason          text        NOT NULL,
    waiting_since   timestamptz NOT NULL DEFAULT now(),
    last_checked_by bigint      NOT NULL,
    PRIMARY KEY (topic, kafka_partition, kafka_offset)
);

CREATE INDEX backfill_waiting_check_order ON backfill_waiting (topic, last_checked_by);

GRANT SELECT, INSERT, UPDATE, DELETE ON backfill_waiting TO ${flyway:defaultSchema}_batch_role;
