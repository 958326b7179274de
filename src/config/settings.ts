/**
 * Every setting of the service, declared once: its environment variable, its
 * dotted name in the optional SVC_CONFIG file, its type and default. Loading
 * and validation (src/config/load.ts) read this table; so does the README.
 */
export type SettingType = 'string' | 'url' | 'port' | 'int' | 'bool' | 'level' | 'choice';

export interface SettingSpec {
  env: string;
  /** Dotted name in the SVC_CONFIG file. */
  key: string;
  type: SettingType;
  default?: string | number | boolean;
  min?: number;
  /** Allowed URL schemes for `url` settings. */
  schemes?: string[];
  /** The values a `choice` setting takes. */
  values?: readonly string[];
  description: string;
}

export const settingSpecs = {
  port: { env: 'SVC_PORT', key: 'port', type: 'port', default: 8080, description: 'HTTP listen port' },
  host: { env: 'SVC_HOST', key: 'host', type: 'string', default: '0.0.0.0', description: 'listen address' },
  adminToken: { env: 'SVC_ADMIN_TOKEN', key: 'admin.token', type: 'string', description: 'Admin bearer token; unset: every admin request is 401' },
  internalToken: { env: 'SVC_INTERNAL_STATS_TOKEN', key: 'internal.token', type: 'string', description: 'X-Internal-Token for /internal/*' },
  internalAllowAnonymous: { env: 'SVC_INTERNAL_ALLOW_ANONYMOUS', key: 'internal.allow_anonymous', type: 'bool', default: false, description: 'accept /internal/* without a token when none is configured' },
  databaseUrl: { env: 'SVC_DATABASE_URL', key: 'database.url', type: 'url', schemes: ['postgres:', 'postgresql:'], description: 'Postgres URL; unset: embedded Postgres (PGlite) under SVC_DATA_DIR' },
  pgliteSharedBuffersMb: { env: 'SVC_PGLITE_SHARED_BUFFERS_MB', key: 'database.embedded_shared_buffers_mb', type: 'int', default: 32, min: 1, description: "embedded Postgres' buffer pool in MB, resident from the start (16 cost 6% more CPU a stats-flush key)" },
  redisUrl: { env: 'SVC_REDIS_URL', key: 'redis.url', type: 'url', schemes: ['redis:', 'rediss:'], description: 'Redis URL; unset: in-process store (single node)' },
  clickhouseUrl: { env: 'SVC_CLICKHOUSE_URL', key: 'clickhouse.url', type: 'url', schemes: ['http:', 'https:'], description: 'ClickHouse HTTP URL; unset: embedded chDB under SVC_DATA_DIR' },
  clickhouseCommandTimeoutMs: { env: 'SVC_CLICKHOUSE_COMMAND_TIMEOUT_MS', key: 'clickhouse.command_timeout_ms', type: 'int', default: 600000, min: 1000, description: 'with SVC_CLICKHOUSE_URL: how long a statement that answers only when done (DDL, DELETE, OPTIMIZE, rollup rebuilds) may keep its socket silent; reads and inserts get 30 s' },
  chdbConnections: { env: 'SVC_CHDB_CONNECTIONS', key: 'clickhouse.embedded_connections', type: 'int', default: 4, min: 1, description: 'connections to embedded chDB; reads run in parallel across them' },
  chdbDirtyDecayMs: { env: 'SVC_CHDB_DIRTY_DECAY_MS', key: 'clickhouse.embedded_dirty_decay_ms', type: 'int', default: 500, min: 0, description: "how long embedded chDB's allocator keeps freed pages before returning them (JE_MALLOC_CONF, when set, wins)" },
  dataDir: { env: 'SVC_DATA_DIR', key: 'data_dir', type: 'string', default: './data', description: 'where embedded engines and the log spool keep their files' },
  modelRegistryUrl: { env: 'SVC_MODEL_REGISTRY_URL', key: 'model_registry.url', type: 'url', schemes: ['http:', 'https:'], description: 'remote model registry source' },
  oauthTokenUrls: { env: 'SVC_OAUTH_TOKEN_URLS', key: 'oauth.token_urls', type: 'string', description: 'token endpoints of the OAuth upstream kinds, overriding the defaults: type=url,type=url' },
  logLevel: { env: 'SVC_LOG_LEVEL', key: 'log.level', type: 'level', default: 'info', description: 'pino level' },
  outboxIntervalMs: { env: 'SVC_OUTBOX_INTERVAL_MS', key: 'outbox.interval_ms', type: 'int', default: 1000, min: 10, description: 'retry outbox poll interval' },
  outboxBatch: { env: 'SVC_OUTBOX_BATCH', key: 'outbox.batch', type: 'int', default: 100, min: 1, description: 'outbox entries delivered per pass' },
  outboxMaxRetries: { env: 'SVC_OUTBOX_MAX_RETRIES', key: 'outbox.max_retries', type: 'int', default: 10, min: 0, description: 'attempts before an outbox entry is parked as dead' },
  storeCheckMs: { env: 'SVC_STORE_CHECK_MS', key: 'store.check_ms', type: 'int', default: 2000, min: 100, description: 'how often the shared store is checked for lost data (its marker key missing); lost data is rewritten in full' },
  authFailLimit: { env: 'SVC_AUTH_FAIL_LIMIT', key: 'auth.fail_limit', type: 'int', default: 20, min: 0, description: 'failed authentications per client address per minute before 429 (0: off)' },
  configPollMs: { env: 'SVC_CONFIG_POLL_MS', key: 'config_poll_ms', type: 'int', default: 2000, min: 100, description: "how often each node re-reads the feature flags and the webhook configuration from Postgres: the bound on another node's change reaching this one when its announcement is lost" },
  identityCacheMs: { env: 'SVC_IDENTITY_CACHE_MS', key: 'auth.identity_cache_ms', type: 'int', default: 1000, min: 0, description: 'longest a child-key or master-key identity is reused when no change was announced (0: off)' },
  trustProxy: { env: 'SVC_TRUST_PROXY', key: 'trust_proxy', type: 'bool', default: false, description: 'take the client address from X-Forwarded-For, as appended by the trusted proxies (SVC_TRUST_PROXY_HOPS)' },
  trustProxyHops: { env: 'SVC_TRUST_PROXY_HOPS', key: 'trust_proxy_hops', type: 'int', default: 1, min: 1, description: 'trusted proxies in front of the service: the client address is the X-Forwarded-For entry this many places from the right (1: the one the nearest proxy appended)' },
  bodyMemoryBytes: { env: 'SVC_BODY_MEMORY_BYTES', key: 'http.body_memory_bytes', type: 'int', default: 67108864, min: 1048576, description: 'bytes held for request bodies still being received, across all requests; past it a request with a body gets 503 with Retry-After' },
  workers: { env: 'SVC_WORKERS', key: 'actors.workers', type: 'int', default: 2, min: 1, description: 'worker threads hosting domain actors' },
  nodeId: { env: 'SVC_NODE_ID', key: 'node_id', type: 'int', default: 0, min: 0, description: 'node number (0-15) mixed into log ids so several CP nodes never collide' },
  logBatchRecords: { env: 'SVC_LOG_BATCH_RECORDS', key: 'logs.batch_records', type: 'int', default: 20000, min: 1, description: 'log records per ClickHouse insert' },
  logBatchBytes: { env: 'SVC_LOG_BATCH_BYTES', key: 'logs.batch_bytes', type: 'int', default: 8388608, min: 1024, description: 'bytes per ClickHouse insert' },
  logFlushMs: { env: 'SVC_LOG_FLUSH_MS', key: 'logs.flush_ms', type: 'int', default: 1000, min: 1, description: 'longest time a log record waits before its batch is written' },
  logAck: { env: 'SVC_LOG_ACK', key: 'logs.ack', type: 'choice', values: ['durable', 'fsync', 'memory'], default: 'durable', description: "when POST /logs answers 202: durable, once the records are written to the write-ahead file (a kill -9 loses none; a power loss, what the group fdatasync had not covered, about a millisecond); fsync, once that fdatasync covers them (a power loss loses none; clients must not pipeline); memory, once they are in the writer's buffer (fastest; a kill -9 loses up to one flush window)" },
  logMemoryBytes: { env: 'SVC_LOG_MEMORY_BYTES', key: 'logs.memory_bytes', type: 'int', default: 67108864, min: 1024, description: 'pending log bytes held in memory before batches spill to the disk spool' },
  retentionIntervalMs: { env: 'SVC_RETENTION_INTERVAL_MS', key: 'logs.retention_interval_ms', type: 'int', default: 3600000, min: 1000, description: 'how often log retention (days and max records) is enforced' },
  auditRetentionDays: { env: 'SVC_AUDIT_RETENTION_DAYS', key: 'audit.retention_days', type: 'int', default: 365, min: 1, description: 'days the audit trail is kept' },
  logShutdownInsertMs: { env: 'SVC_LOG_SHUTDOWN_INSERT_MS', key: 'logs.shutdown_insert_ms', type: 'int', default: 5000, min: 0, description: 'at shutdown, how long the log writer goes on inserting its backlog before it leaves the rest in the disk spool for the next start (keep it under the grace period before a kill)' },
  logSpoolBytes: { env: 'SVC_LOG_SPOOL_BYTES', key: 'logs.spool_bytes', type: 'int', default: 1073741824, min: 1024, description: 'disk spool bound; past it POST /logs answers 503' },
  statsCacheEntries: { env: 'SVC_STATS_CACHE_ENTRIES', key: 'stats.cache_entries', type: 'int', default: 1000, min: 0, description: 'statistics answers kept until the logs they cover change (0: off)' },
  statsCacheMaxAgeMs: { env: 'SVC_STATS_CACHE_MAX_AGE_MS', key: 'stats.cache_max_age_ms', type: 'int', default: 300000, min: 0, description: 'longest a cached statistics answer is reused even when no log change was announced' },
  alertIntervalMs: { env: 'SVC_ALERT_INTERVAL_MS', key: 'alerts.interval_ms', type: 'int', default: 60000, min: 1000, description: 'how often the traffic-spike detector runs' },
  spendIntervalMs: { env: 'SVC_SPEND_INTERVAL_MS', key: 'spend.interval_ms', type: 'int', default: 60000, min: 1000, description: 'how often the spend of every budgeted master and key is computed from the logs, mirrored into the store and checked for budget alerts' },
} as const satisfies Record<string, SettingSpec>;

export type SettingName = keyof typeof settingSpecs;

type ValueOf<S extends SettingSpec> = S['type'] extends 'port' | 'int'
  ? number
  : S['type'] extends 'bool'
    ? boolean
    : S extends { type: 'choice'; values: readonly (infer V)[] }
      ? V
      : string;

/** The validated configuration: settings with a default are always present. */
export type Config = {
  [K in SettingName]: (typeof settingSpecs)[K] extends { default: string | number | boolean }
    ? ValueOf<(typeof settingSpecs)[K]>
    : ValueOf<(typeof settingSpecs)[K]> | undefined;
};
