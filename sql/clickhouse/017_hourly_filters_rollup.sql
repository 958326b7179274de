-- Hours by model, provider group and status code, every master together
-- (docs/analytics.md, "Rollups" and "The logs list"): the logs views' filters
-- without a master or key (a model with a group, a group, a status code; the
-- group and status facets) over whole hours and days. They were read from
-- `logs_hourly` and `logs_daily`, whose sort keys start with master_id, so such
-- a read opened every master's rows of its range: at 200M logs, a model and a
-- group over a day read 1.6M rows, growing with a day's traffic. Here a day
-- holds at most 24 x (models x groups x codes) rows, whatever the log count.
-- The view is created from src/storage/clickhouse/rollups.ts after the
-- migrations run (ensureRollupViews), which first backfills the table from
-- `logs` (one scan).

CREATE TABLE IF NOT EXISTS logs_hourly_filters
(
    hour          DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    model         LowCardinality(String),
    `group`       LowCardinality(String),
    status_code   UInt16,
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
ORDER BY (hour, model, `group`, status_code)
SETTINGS non_replicated_deduplication_window = 10000;
