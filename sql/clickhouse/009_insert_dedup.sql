-- Insert deduplication on `logs` and every rollup, so that a batch inserted
-- again after a crash (a write-ahead segment or spool file replayed at start,
-- docs/log-pipeline.md "Acknowledgement") is stored once. Every insert of the
-- log writer carries `insert_deduplication_token` (the hash of its bytes) and
-- `deduplicate_blocks_in_dependent_materialized_views = 1`: a block `logs`
-- already holds is dropped there, and each rollup's view still receives it and
-- checks it against its own table's window, so a block that reached `logs`
-- but not a rollup heals that rollup without counting the others twice.
-- A plain MergeTree keeps no block ids unless this window is set (default 0).
-- 10,000 blocks: a replay comes right after the start, with at most the spool
-- (one block per partition of each of its files) and other nodes' inserts in
-- between. The rollup rebuilds (INSERT ... SELECT, rollups.ts) set
-- insert_deduplicate = 0: a rebuilt slice identical to an earlier one must not
-- be dropped; so does a backfill (backfillSql). New rollup tables need the same setting.

ALTER TABLE logs MODIFY SETTING non_replicated_deduplication_window = 10000;

ALTER TABLE logs_minute MODIFY SETTING non_replicated_deduplication_window = 10000;

ALTER TABLE logs_minute_global MODIFY SETTING non_replicated_deduplication_window = 10000;

ALTER TABLE logs_hourly MODIFY SETTING non_replicated_deduplication_window = 10000;

ALTER TABLE logs_hourly_key MODIFY SETTING non_replicated_deduplication_window = 10000;

ALTER TABLE logs_hourly_global MODIFY SETTING non_replicated_deduplication_window = 10000;

ALTER TABLE logs_daily MODIFY SETTING non_replicated_deduplication_window = 10000;

ALTER TABLE logs_daily_global MODIFY SETTING non_replicated_deduplication_window = 10000;

ALTER TABLE logs_daily_total MODIFY SETTING non_replicated_deduplication_window = 10000;
