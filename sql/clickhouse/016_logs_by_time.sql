-- The logs list newest first under no master or key filter (docs/analytics.md,
-- "The logs list"): the sort key starts with master_id, so a page of the
-- newest records, or of a model, group, status or errors only, read the
-- granules of every master in its window: all of the newest day's, growing with
-- a day's traffic. `by_time` keeps the columns those filters and the page's
-- order need, sorted by time; the list reads the page's keys from it, then
-- the page's rows from `logs` by their keys.
--
-- A projection is kept with every part (inserts, merges, mutations, partitions
-- dropped), so no other code writes it. A lightweight DELETE cannot update it:
-- with `lightweight_mutation_projection_mode = 'rebuild'` the deleted rows stay
-- in it (chDB 26.7, tried), so `logs` uses 'drop': a part a deletion touched
-- loses its projection and is read from the table itself (the same answers,
-- the cost before this file) until a merge writes it again. OPTIMIZE ...
-- DEDUPLICATE (a replayed batch's second copies: log-replay.ts) rebuilds it
-- from the merged part.
-- Parts written before this file get it from MATERIALIZE PROJECTION: the
-- embedded engine waits for it (chDB's mutations_sync is 1), a server builds
-- it in the background, and until a part has it, reads of that part use the
-- table itself. Every statement can run again.

ALTER TABLE logs MODIFY SETTING lightweight_mutation_projection_mode = 'drop';

ALTER TABLE logs MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild';

ALTER TABLE logs ADD PROJECTION IF NOT EXISTS by_time (SELECT created_at, id, master_id, key_id, model, `group`, status_code, error_message ORDER BY created_at, id);

ALTER TABLE logs MATERIALIZE PROJECTION by_time;
