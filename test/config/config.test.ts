import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.js';

t.test('defaults of decisions.md', async (t) => {
  const c = loadConfig({});
  t.equal(c.port, 8080);
  t.equal(c.host, '0.0.0.0');
  t.equal(c.dataDir, './data');
  t.equal(c.logLevel, 'info');
  t.equal(c.outboxIntervalMs, 1000);
  t.equal(c.outboxBatch, 100);
  t.equal(c.outboxMaxRetries, 10);
  t.equal(c.authFailLimit, 20);
  t.equal(c.trustProxy, false);
  t.equal(c.internalAllowAnonymous, false);
  t.equal(c.adminToken, undefined);
  t.equal(c.databaseUrl, undefined);
});

t.test("SVC_PGLITE_SHARED_BUFFERS_MB sizes the embedded Postgres' buffer pool: 32 MB unless set", async (t) => {
  t.equal(loadConfig({}).pgliteSharedBuffersMb, 32);
  t.equal(loadConfig({ SVC_PGLITE_SHARED_BUFFERS_MB: '128' }).pgliteSharedBuffersMb, 128);
  t.throws(() => loadConfig({ SVC_PGLITE_SHARED_BUFFERS_MB: '0' }), /SVC_PGLITE_SHARED_BUFFERS_MB/);
  t.throws(() => loadConfig({ SVC_PGLITE_SHARED_BUFFERS_MB: '32MB' }), /SVC_PGLITE_SHARED_BUFFERS_MB/);
});

t.test("SVC_CHDB_DIRTY_DECAY_MS: how long chDB's allocator keeps freed pages, 500 ms unless set", async (t) => {
  t.equal(loadConfig({}).chdbDirtyDecayMs, 500);
  t.equal(loadConfig({ SVC_CHDB_DIRTY_DECAY_MS: '0' }).chdbDirtyDecayMs, 0);
  t.equal(loadConfig({ SVC_CHDB_DIRTY_DECAY_MS: '5000' }).chdbDirtyDecayMs, 5000);
  t.throws(() => loadConfig({ SVC_CHDB_DIRTY_DECAY_MS: '-1' }), /SVC_CHDB_DIRTY_DECAY_MS/);
});

t.test('SVC_CLICKHOUSE_COMMAND_TIMEOUT_MS: ten minutes for a command over HTTP unless set, at least a second', async (t) => {
  t.equal(loadConfig({}).clickhouseCommandTimeoutMs, 600_000);
  t.equal(loadConfig({ SVC_CLICKHOUSE_COMMAND_TIMEOUT_MS: '3600000' }).clickhouseCommandTimeoutMs, 3_600_000);
  t.throws(() => loadConfig({ SVC_CLICKHOUSE_COMMAND_TIMEOUT_MS: '999' }), /SVC_CLICKHOUSE_COMMAND_TIMEOUT_MS/);
});

t.test('SVC_LOG_ACK: durable unless set to memory (docs/log-pipeline.md, "Acknowledgement")', async (t) => {
  t.equal(loadConfig({}).logAck, 'durable');
  t.equal(loadConfig({ SVC_LOG_ACK: 'memory' }).logAck, 'memory');
  t.equal(loadConfig({ SVC_LOG_ACK: ' durable ' }).logAck, 'durable');
});

t.test('a bad value throws one line naming the setting', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ SVC_PORT: 'eighty' }, /SVC_PORT/],
    [{ SVC_PORT: '70000' }, /SVC_PORT/],
    [{ SVC_OUTBOX_BATCH: '0' }, /SVC_OUTBOX_BATCH/],
    [{ SVC_INTERNAL_ALLOW_ANONYMOUS: 'maybe' }, /SVC_INTERNAL_ALLOW_ANONYMOUS/],
    [{ SVC_DATABASE_URL: 'mysql://x' }, /SVC_DATABASE_URL/],
    [{ SVC_REDIS_URL: 'not a url' }, /SVC_REDIS_URL/],
    [{ SVC_LOG_LEVEL: 'loud' }, /SVC_LOG_LEVEL/],
    [{ SVC_AUTH_FAIL_LIMIT: '-1' }, /SVC_AUTH_FAIL_LIMIT/],
    [{ SVC_LOG_ACK: 'sync' }, /SVC_LOG_ACK .*expected one of durable, fsync, memory/],
  ];
  for (const [env, re] of cases) {
    const err = (() => {
      try {
        loadConfig(env);
      } catch (e) {
        return e;
      }
    })();
    t.ok(err instanceof ConfigError, JSON.stringify(env));
    t.match((err as Error).message, re);
    t.notMatch((err as Error).message, /\n/, 'one line');
  }
});

t.test('SVC_CONFIG file (YAML, nested or dotted); the environment wins', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-config-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, 'port: 9000\ninternal:\n  allow_anonymous: true\noutbox.batch: 7\nlog:\n  level: debug\n');
  const c = loadConfig({ SVC_CONFIG: file, SVC_PORT: '9100' });
  t.equal(c.port, 9100, 'environment wins');
  t.equal(c.internalAllowAnonymous, true);
  t.equal(c.outboxBatch, 7);
  t.equal(c.logLevel, 'debug');
  const json = join(dir, 'config.json');
  writeFileSync(json, JSON.stringify({ 'auth.fail_limit': 3 }));
  t.equal(loadConfig({ SVC_CONFIG: json }).authFailLimit, 3);
  writeFileSync(file, 'no_such_setting: 1\n');
  t.throws(() => loadConfig({ SVC_CONFIG: file }), /unknown setting "no_such_setting"/);
  t.throws(() => loadConfig({ SVC_CONFIG: join(dir, 'missing.yaml') }), /SVC_CONFIG/);
  writeFileSync(file, 'port: [1, 2\n');
  t.throws(() => loadConfig({ SVC_CONFIG: file }), ConfigError);
});
