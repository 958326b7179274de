import t from 'tap';
import { layoutVersion } from '../../src/storage/redis/layout.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { adminToken, eventually, freshDatabase, postgresAvailable, redisAvailable, startTestService } from '../helpers/harness.js';

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';

t.test('routing changes made while Redis is down all arrive once it is back', async (t) => {
  if (!(await redisAvailable()) || !(await postgresAvailable())) {
    t.plan(0, 'needs real Redis and Postgres');
    return;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'cp-upstream-outage-'));
  const db = await freshDatabase();
  t.teardown(async () => {
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const redis = new Redis(redisUrl);
  t.teardown(() => redis.disconnect());
  await redis.flushdb();

  const down = await startTestService({ dataDir, databaseUrl: db.url, keepData: true, env: { SVC_REDIS_URL: 'redis://127.0.0.1:1' } });
  const req = (m: string, p: string, body?: unknown) => down.request(m, p, { token: adminToken, body });
  await req('POST', '/admin/models', { name: 'm1', context_window: 1000, supports_vision: true });
  const g = (await req('POST', '/admin/provider-groups', { name: 'g', type: 'openai', base_url: 'https://a.example', models: ['m1'] })).json;
  const gone = (await req('POST', '/admin/provider-groups', { name: 'gone', type: 'openai', base_url: 'https://b.example', models: ['m1'] })).json;
  const k = (await req('POST', '/admin/api-keys', { group_id: g.id, api_key: 'key-1', weight: 4 })).json;
  await req('POST', '/admin/api-keys', { group_id: gone.id, api_key: 'key-2' });
  await req('POST', '/admin/namespaces', { name: 'ns' });
  await req('POST', '/admin/bindings', { namespace: 'ns', public_model: 'm1', group_id: g.id, weight: 3 });
  t.equal((await req('PUT', `/admin/api-keys/${k.id}`, { weight: 6 })).status, 200);
  t.equal((await req('DELETE', `/admin/provider-groups/${gone.id}`)).status, 200);
  const state = await down.service.system.ask<{ pending: number; dead: number }>('outbox', 'state');
  t.ok(state.pending >= 8, `changes wait in the outbox (${state.pending})`);
  t.equal(state.dead, 0);
  await down.stop();
  t.equal(await redis.get('route:version'), null, 'nothing reached Redis');

  const up = await startTestService({ dataDir, databaseUrl: db.url, keepData: true, env: { SVC_REDIS_URL: redisUrl } });
  t.teardown(() => up.stop());
  const delivered = await eventually(async () => (await up.service.system.ask<{ pending: number }>('outbox', 'state')).pending === 0, 10_000);
  t.ok(delivered, 'the outbox drained');
  const snap = JSON.parse((await redis.get('route:binding:ns.m1'))!);
  t.match(snap, { available: true, total_weight: 3, candidates: [{ group_id: g.id, weight: 3, key_count: 1, key_weight: 6 }] });
  t.equal(snap.capabilities.context_window, 1000);
  // The store held no layout version, so the new service also wrote a full snapshot after the 8 queued changes:
  // everything ends under its routing version, the 9th (docs/store-layout.md, "Full snapshot and refill").
  t.equal(snap.version, 9, 'the snapshot carries the version of the last write touching it (the full snapshot)');
  t.equal(Number(await redis.get('route:version')), 9, 'route:version is the newest: 8 changes, then the snapshot');
  t.equal(await redis.hget(`route:group:${g.id}`, 'version'), '9');
  t.equal(await redis.get('meta:layout_version'), String(layoutVersion), 'the store is complete');
  t.equal(JSON.parse((await redis.hget(`route:group:${g.id}:keys`, String(k.id)))!).weight, 6, 'the key update arrived');
  t.equal(await redis.exists(`route:group:${gone.id}`), 0, 'the deleted group is gone');
  t.same(await redis.smembers('route:groups'), [String(g.id)]);
});
