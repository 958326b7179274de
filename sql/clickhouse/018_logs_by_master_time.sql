-- A master's statistics finer than whole minutes (docs/analytics.md, "The
-- partial minutes"): the seconds at either end of a range, a realtime window,
-- a master's few whole minutes outside its whole hours. They are read from raw
-- `logs`, whose sort key (master_id, key_id, created_at) cannot narrow a
-- master's rows by time: a master's minute read every granule of its day (at
-- 200M logs, 4 granules a master-day against 1-2 at 20M), so the read grew
-- with the master's daily traffic, not with the window. `by_master_time`
-- keeps the columns those reads aggregate, sorted by (master_id, created_at):
-- a window reads the granules it covers. ClickHouse chooses it when it reads
-- fewer marks than the table, so a sparse master's read is unchanged.
--
-- Kept with every part like `by_time` (016), under the same settings: a part a
-- lightweight DELETE touched loses it until the retention pass writes it again
-- (logs.ts, restoreProjections). Parts written before this file get it from
-- MATERIALIZE PROJECTION. Every statement can run again.

ALTER TABLE logs ADD PROJECTION IF NOT EXISTS by_master_time (SELECT master_id, created_at, model, status_code, latency_ms, tokens_in, tokens_out, cost, unpriced ORDER BY master_id, created_at);

ALTER TABLE logs MATERIALIZE PROJECTION by_master_time;
