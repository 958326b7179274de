import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { adminToken, eventually, freshDatabase, postgresAvailable, redisAvailable, startTestService } from '../helpers/harness.js';

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';

t.test('a Redis outage loses no change: the outbox delivers everything, in order, once Redis answers', async (t) => {
  if (!(await redisAvailable())) {
    t.plan(0, 'no Redis on this machine');
    return;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'cp-outbox-'));
  const db = (await postgresAvailable()) ? await freshDatabase() : undefined;
  t.teardown(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const redis = new Redis(redisUrl);
  t.teardown(() => redis.disconnect());
  await redis.flushdb();

  // 1. Redis unreachable (a closed port): writes succeed and wait in the outbox.
  const down = await startTestService({ dataDir, databaseUrl: db?.url, keepData: true, env: { SVC_REDIS_URL: 'redis://127.0.0.1:1' } });
  t.equal((await down.request('GET', '/health')).json.store, 'down');
  t.equal((await down.request('GET', '/health')).status, 503, 'health is 503 while a store is down');
  for (const days of [5, 6, 9]) {
    const r = await down.request('PUT', '/admin/features', { token: adminToken, body: { log_retention_days: days } });
    t.equal(r.status, 200, 'the change is accepted during the outage');
  }
  await down.request('PUT', '/admin/features', { token: adminToken, body: { log_request_body_enabled: false } });
  const state = await down.service.system.ask<{ pending: number; dead: number }>('outbox', 'state');
  t.equal(state.pending, 4, 'four changes wait');
  t.equal(state.dead, 0, 'an outage does not count as attempts');
  await down.stop();
  t.equal(await redis.get('meta:log:retention_days'), null, 'nothing reached Redis');

  // 2. Same database, Redis back: everything is delivered, the last write wins.
  const up = await startTestService({ dataDir, databaseUrl: db?.url, keepData: true, env: { SVC_REDIS_URL: redisUrl } });
  t.teardown(() => up.stop());
  const delivered = await eventually(async () => (await redis.get('meta:log:retention_days')) === '9');
  t.ok(delivered, 'the final value arrived');
  t.equal(await redis.hget('meta:features', 'log_request_body_enabled'), 'false');
  const after = await up.service.system.ask<{ pending: number }>('outbox', 'state');
  t.equal(after.pending, 0, 'the outbox is empty');
});
