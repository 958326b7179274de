-- The seconds of everything by model (docs/analytics.md, "Rollups"): an
-- unfiltered read's partial minutes at either end of its range. Read from raw
-- `logs`, they opened a whole day partition (its sort key starts with master_id,
-- so a granule spans the day), and grew with the log count; here they open at
-- most (models x 59 seconds) rows at each end, whatever the count. The bounds of
-- a range are whole seconds, so seconds keep reads exact. Master and key reads
-- keep their edges in `logs`, whose sort key reads just that master or key.
-- The view is created from src/storage/clickhouse/rollups.ts after the
-- migrations run (ensureRollupViews), which first backfills the table.

CREATE TABLE IF NOT EXISTS logs_second_global
(
    second        DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
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
PARTITION BY toYYYYMMDD(second)
ORDER BY (second, model)
SETTINGS non_replicated_deduplication_window = 10000;
