-- The rollups regrained and carrying money (docs/analytics.md, "Rollups").
-- A key sends far less than one request a minute, so key_id in the minute and
-- hour rollups kept about one row per log: logs_minute and logs_hourly lose it;
-- logs_hourly_key (the only rollup with key_id, read only by a key filter or the
-- key facet) and logs_minute_global (unfiltered minute reads) are new; every
-- rollup gains cost (sum of logs.cost) and unpriced (sum of logs.unpriced), and
-- the deduplication window that replayed inserts need.
-- This file makes tables only: every view is created from
-- src/storage/clickhouse/rollups.ts after the migrations run (ensureRollupViews),
-- which first backfills the table from `logs` (TRUNCATE, then INSERT SELECT, so a
-- rerun heals). Migrations run at start, before any ingest, so nothing is
-- inserted between the DROPs and the new views.

DROP VIEW IF EXISTS logs_minute_mv;

DROP VIEW IF EXISTS logs_hourly_mv;

DROP VIEW IF EXISTS logs_hourly_global_mv;

DROP VIEW IF EXISTS logs_daily_mv;

DROP VIEW IF EXISTS logs_daily_global_mv;

DROP VIEW IF EXISTS logs_daily_total_mv;

DROP TABLE IF EXISTS logs_minute;

CREATE TABLE logs_minute
(
    minute        DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    master_id     UInt64,
    model         LowCardinality(String),
    `group`       LowCardinality(String),
    status_class  UInt8,
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMMDD(minute)
ORDER BY (master_id, minute, model, `group`, status_class)
SETTINGS non_replicated_deduplication_window = 1000;

DROP TABLE IF EXISTS logs_minute_global;

CREATE TABLE logs_minute_global
(
    minute        DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    model         LowCardinality(String),
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMMDD(minute)
ORDER BY (minute, model)
SETTINGS non_replicated_deduplication_window = 1000;

DROP TABLE IF EXISTS logs_hourly;

CREATE TABLE logs_hourly
(
    hour          DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    master_id     UInt64,
    model         LowCardinality(String),
    `group`       LowCardinality(String),
    status_class  UInt8,
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (master_id, hour, model, `group`, status_class)
SETTINGS non_replicated_deduplication_window = 1000;

DROP TABLE IF EXISTS logs_hourly_key;

CREATE TABLE logs_hourly_key
(
    hour          DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    master_id     UInt64,
    key_id        UInt64,
    model         LowCardinality(String),
    `group`       LowCardinality(String),
    status_class  UInt8,
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (master_id, key_id, hour, model, `group`, status_class)
SETTINGS non_replicated_deduplication_window = 1000;

DROP TABLE IF EXISTS logs_hourly_global;

CREATE TABLE logs_hourly_global
(
    hour          DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    model         LowCardinality(String),
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, model)
SETTINGS non_replicated_deduplication_window = 1000;

DROP TABLE IF EXISTS logs_daily;

CREATE TABLE logs_daily
(
    day           DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    master_id     UInt64,
    model         LowCardinality(String),
    `group`       LowCardinality(String),
    status_class  UInt8,
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (master_id, day, model, `group`, status_class)
SETTINGS non_replicated_deduplication_window = 1000;

DROP TABLE IF EXISTS logs_daily_global;

CREATE TABLE logs_daily_global
(
    day           DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    model         LowCardinality(String),
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (day, model)
SETTINGS non_replicated_deduplication_window = 1000;

DROP TABLE IF EXISTS logs_daily_total;

CREATE TABLE logs_daily_total
(
    day           DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (day)
SETTINGS non_replicated_deduplication_window = 1000;
