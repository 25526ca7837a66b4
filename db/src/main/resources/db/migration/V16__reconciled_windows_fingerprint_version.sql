-- Which row hash a reconciled_windows row's fingerprints were computed with. V15's rows (version 1) XOR
-- hash_record_extended of each row; the reconciler now uses a cheaper chain of per-column hashes (version 2: each
-- column's type's own extended hash, seeded with the hash of the columns before it), which gives other values. A
-- recorded window whose version is not the reconciler's is simply treated as changed: the next run reconciles it key
-- by key once (same diffs, nothing to correct if nothing changed) and records it again in the current version.
ALTER TABLE reconciled_windows ADD COLUMN fingerprint_version smallint NOT NULL DEFAULT 1;
