-- One table for every rollup. Each rollup had its own table and materialized
-- view, so every insert into `logs` wrote seven parts (~90 files), and chDB's
-- insert cost is mostly per part written. `logs_rollups` holds all of them, one
-- `grain` per former table, filled by one view that computes every grain from a
-- block at once (GROUPING SETS): an insert writes `logs` and at most two parts here
-- (the day partition of the minute and hourly grains, the month partition of the
-- others). Each former table becomes a plain view of its grain under the same
-- name and columns, so readers are unchanged.
--
-- The sort key keeps each former table's order: the minute grain by time first
-- (realtime and alert reads scan the last minutes of every master), the other
-- grains by master, then time (a master's rows of a month are contiguous; the
-- global grains have master_id 0). Partitions are as before: days for minute
-- and hourly, months for the coarser grains.
--
-- Migrations run at start, before any ingest, so nothing is inserted between
-- the old views' DROP and the backfill. The view and the backfill are generated
-- by src/storage/clickhouse/rollups.ts (the test suite checks the text); the
-- TRUNCATE makes a rerun after a failure heal.

DROP VIEW IF EXISTS logs_minute_mv;

DROP VIEW IF EXISTS logs_hourly_mv;

DROP VIEW IF EXISTS logs_hourly_global_mv;

DROP VIEW IF EXISTS logs_daily_mv;

DROP VIEW IF EXISTS logs_daily_global_mv;

DROP VIEW IF EXISTS logs_daily_total_mv;

CREATE TABLE IF NOT EXISTS logs_rollups
(
    grain         Enum8('minute' = 1, 'hourly' = 2, 'hourly_global' = 3, 'daily' = 4, 'daily_global' = 5, 'daily_total' = 6),
    bucket        DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    master_id     UInt64,
    key_id        UInt64,
    model         LowCardinality(String),
    `group`       LowCardinality(String),
    status_class  UInt8,
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32),
    -- The minute grain's time is in the sort key only through an expression, which the primary index cannot match.
    INDEX bucket_minmax bucket TYPE minmax GRANULARITY 1
)
ENGINE = AggregatingMergeTree
PARTITION BY if(grain IN ('minute', 'hourly'), toYYYYMMDD(bucket), toYYYYMM(bucket))
ORDER BY (grain, if(grain = 'minute', bucket, toDateTime(0, 'UTC')), master_id, bucket, key_id, model, `group`, status_class);

TRUNCATE TABLE logs_rollups;

INSERT INTO logs_rollups (grain, bucket, master_id, key_id, model, `group`, status_class, requests, errors, tokens_in, tokens_out, latency_sum, latency_q)
SELECT
  transform(grouping(k_minute, k_hour, k_day, k_master_id, k_key_id, k_model, k_group, k_status_class), [96, 160, 187, 200, 219, 223], ['minute', 'hourly', 'hourly_global', 'daily', 'daily_global', 'daily_total'], '') AS grain,
  multiIf(grouping(k_minute) = 0, k_minute, grouping(k_hour) = 0, k_hour, k_day) AS bucket,
  k_master_id AS master_id,
  k_key_id AS key_id,
  k_model AS model,
  k_group AS `group`,
  k_status_class AS status_class,
  count() AS requests,
  countIf(status_code >= 400) AS errors,
  sum(tokens_in) AS tokens_in,
  sum(tokens_out) AS tokens_out,
  sum(latency_ms) AS latency_sum,
  quantilesState(0.5, 0.95, 0.99)(latency_ms) AS latency_q
FROM (
  SELECT
    toStartOfMinute(created_at) AS k_minute,
    toStartOfHour(created_at) AS k_hour,
    toStartOfDay(created_at) AS k_day,
    master_id AS k_master_id,
    key_id AS k_key_id,
    model AS k_model,
    `group` AS k_group,
    intDiv(status_code, 100) AS k_status_class,
    status_code,
    tokens_in,
    tokens_out,
    latency_ms
  FROM logs
)
GROUP BY GROUPING SETS (
  (k_minute, k_master_id, k_key_id, k_model, k_group, k_status_class),
  (k_hour, k_master_id, k_key_id, k_model, k_group, k_status_class),
  (k_hour, k_model),
  (k_day, k_master_id, k_model, k_group, k_status_class),
  (k_day, k_model),
  (k_day)
);

CREATE MATERIALIZED VIEW IF NOT EXISTS logs_rollups_mv TO logs_rollups AS
SELECT
  transform(grouping(k_minute, k_hour, k_day, k_master_id, k_key_id, k_model, k_group, k_status_class), [96, 160, 187, 200, 219, 223], ['minute', 'hourly', 'hourly_global', 'daily', 'daily_global', 'daily_total'], '') AS grain,
  multiIf(grouping(k_minute) = 0, k_minute, grouping(k_hour) = 0, k_hour, k_day) AS bucket,
  k_master_id AS master_id,
  k_key_id AS key_id,
  k_model AS model,
  k_group AS `group`,
  k_status_class AS status_class,
  count() AS requests,
  countIf(status_code >= 400) AS errors,
  sum(tokens_in) AS tokens_in,
  sum(tokens_out) AS tokens_out,
  sum(latency_ms) AS latency_sum,
  quantilesState(0.5, 0.95, 0.99)(latency_ms) AS latency_q
FROM (
  SELECT
    toStartOfMinute(created_at) AS k_minute,
    toStartOfHour(created_at) AS k_hour,
    toStartOfDay(created_at) AS k_day,
    master_id AS k_master_id,
    key_id AS k_key_id,
    model AS k_model,
    `group` AS k_group,
    intDiv(status_code, 100) AS k_status_class,
    status_code,
    tokens_in,
    tokens_out,
    latency_ms
  FROM logs
)
GROUP BY GROUPING SETS (
  (k_minute, k_master_id, k_key_id, k_model, k_group, k_status_class),
  (k_hour, k_master_id, k_key_id, k_model, k_group, k_status_class),
  (k_hour, k_model),
  (k_day, k_master_id, k_model, k_group, k_status_class),
  (k_day, k_model),
  (k_day)
);

DROP TABLE IF EXISTS logs_minute;

DROP TABLE IF EXISTS logs_hourly;

DROP TABLE IF EXISTS logs_hourly_global;

DROP TABLE IF EXISTS logs_daily;

DROP TABLE IF EXISTS logs_daily_global;

DROP TABLE IF EXISTS logs_daily_total;

CREATE VIEW IF NOT EXISTS logs_minute AS
SELECT
  bucket AS minute,
  master_id,
  key_id,
  model,
  `group`,
  status_class,
  requests,
  errors,
  tokens_in,
  tokens_out,
  latency_sum,
  latency_q
FROM logs_rollups
WHERE grain = 'minute';

CREATE VIEW IF NOT EXISTS logs_hourly AS
SELECT
  bucket AS hour,
  master_id,
  key_id,
  model,
  `group`,
  status_class,
  requests,
  errors,
  tokens_in,
  tokens_out,
  latency_sum,
  latency_q
FROM logs_rollups
WHERE grain = 'hourly';

CREATE VIEW IF NOT EXISTS logs_hourly_global AS
SELECT
  bucket AS hour,
  model,
  requests,
  errors,
  tokens_in,
  tokens_out,
  latency_sum,
  latency_q
FROM logs_rollups
WHERE grain = 'hourly_global';

CREATE VIEW IF NOT EXISTS logs_daily AS
SELECT
  bucket AS day,
  master_id,
  model,
  `group`,
  status_class,
  requests,
  errors,
  tokens_in,
  tokens_out,
  latency_sum,
  latency_q
FROM logs_rollups
WHERE grain = 'daily';

CREATE VIEW IF NOT EXISTS logs_daily_global AS
SELECT
  bucket AS day,
  model,
  requests,
  errors,
  tokens_in,
  tokens_out,
  latency_sum,
  latency_q
FROM logs_rollups
WHERE grain = 'daily_global';

CREATE VIEW IF NOT EXISTS logs_daily_total AS
SELECT
  bucket AS day,
  requests,
  errors,
  tokens_in,
  tokens_out,
  latency_sum,
  latency_q
FROM logs_rollups
WHERE grain = 'daily_total';
