-- Hours with no dimension at all (docs/analytics.md, "Rollups"): the whole
-- hours of unfiltered statistics that are not by model (log stats by day,
-- month or none, the dashboard summary, the logs list's unfiltered total).
-- They were read from `logs_hourly_global`, one row per model and hour, each
-- with its own latency state: stats by day over 30 days merged ~1,440 states
-- for the hours outside whole days, and its cost grew with the log count
-- (~700 samples a state at 20M logs, ~7,000 at 200M). Here an hour is one row,
-- its state at most 8,192 samples, whatever the count: the day rollup
-- `logs_daily_total` (004) one grain finer.
-- A granule is 24 rows (a day of hours), not 8,192: each row carries a full
-- latency state (~20 KB), so the default granule, cut at 10 MB, held ~250
-- hours, and reading today's hours deserialized ten days of states (the hours
-- of stats by month over a year: 18 ms against 7 ms with 24 rows, 20M logs).
-- The view is created from src/storage/clickhouse/rollups.ts after the
-- migrations run (ensureRollupViews), which first backfills the table from
-- `logs` (one scan).

CREATE TABLE IF NOT EXISTS logs_hourly_total
(
    hour          DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    error_records SimpleAggregateFunction(sum, UInt64),
    tokens_in     SimpleAggregateFunction(sum, UInt64),
    tokens_out    SimpleAggregateFunction(sum, UInt64),
    cost          SimpleAggregateFunction(sum, Decimal(38, 12)),
    unpriced      SimpleAggregateFunction(sum, UInt64),
    latency_sum   SimpleAggregateFunction(sum, UInt64),
    latency_q     AggregateFunction(quantiles(0.5, 0.95, 0.99), UInt32)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY hour
SETTINGS non_replicated_deduplication_window = 10000, index_granularity = 24;
