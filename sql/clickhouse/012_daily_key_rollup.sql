-- Days per key (docs/analytics.md, "Rollups"): the key facet of the logs views
-- and a key filter's whole days. Over a long window they read logs_hourly_key,
-- which keeps a row per key, model, group, status class and hour (about one per
-- log: 17.9M rows at 20M logs), so their cost grew with the log count. This
-- table keeps only the key and its master: a row per key and day (155k rows at
-- 20M logs over 30 days, 5,000 keys), whatever the log count. A read that also
-- filters or groups on model, group or status class still takes
-- logs_hourly_key. The view is created from src/storage/clickhouse/rollups.ts
-- after the migrations run (ensureRollupViews), which first backfills the table.

CREATE TABLE IF NOT EXISTS logs_daily_key
(
    day           DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    master_id     UInt64,
    key_id        UInt64,
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
ORDER BY (master_id, key_id, day)
SETTINGS non_replicated_deduplication_window = 10000;
