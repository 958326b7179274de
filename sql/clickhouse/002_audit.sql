-- The audit trail: who changed what, with before/after (secrets masked). Kept
-- 365 days by default (SVC_AUDIT_RETENTION_DAYS re-applies the TTL at start).
CREATE TABLE IF NOT EXISTS audit_log
(
    time         DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    request_id   String CODEC(ZSTD(1)),
    actor_role   LowCardinality(String),
    actor_id     String,
    resource     LowCardinality(String),
    resource_id  String,
    action       LowCardinality(String),
    method       LowCardinality(String),
    route        LowCardinality(String),
    status       UInt16,
    before       String CODEC(ZSTD(3)),
    after        String CODEC(ZSTD(3)),
    diff         String CODEC(ZSTD(3))
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (resource, resource_id, time)
TTL toDateTime(time) + INTERVAL 365 DAY DELETE;
