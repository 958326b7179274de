import t from 'tap';
import { sql } from 'slonik';
import { startTestService, adminToken, internalToken, freshDatabase, eventually, type TestService } from '../helpers/harness.js';
import { sha256Hex } from '../../src/contract/hash.js';
import { enqueueChange } from '../../src/storage/postgres/outbox.js';
import { quotaUsedOp } from '../../src/storage/redis/writers/tenancy.js';
import { configChannel, type ConfigChange } from '../../src/storage/redis/layout.js';

async function keyOf(svc: TestService, body: Record<string, unknown> = {}) {
  const m = (await svc.request('POST', '/admin/masters', { token: adminToken, body: { name: 'm', group: 'default' } })).json;
  const k = (await svc.request('POST', `/admin/masters/${m.id}/keys`, { token: adminToken, body })).json;
  return { master: m, key: k, hash: sha256Hex(k.key_secret) };
}
const flush = (svc: TestService, body: unknown) => svc.request('POST', '/internal/stats/flush', { headers: { 'x-internal-token': internalToken }, body });

t.test('stats flush: counters, quota_used in the store, flush ids, atomicity, bad inputs', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const store = svc.service.context.store;
  const db = svc.service.context.db;
  const { key, hash } = await keyOf(svc, { quota_limit: 1000 });
  const g = (await db.one(sql.unsafe`INSERT INTO provider_groups (name, type, base_url) VALUES ('g', 'openai', 'https://x') RETURNING id`)) as { id: number };
  const u = (await db.one(sql.unsafe`INSERT INTO upstream_keys (group_id) VALUES (${g.id}) RETURNING id`)) as { id: number };

  const first = await flush(svc, {
    keys: [
      { token_hash: hash, requests: 2, tokens: 100, last_accessed_at: 1_700_000_000 },
      { token_hash: hash, requests: 1, tokens: 50, last_accessed_at: 1_700_000_100 },
      { token_hash: 'f'.repeat(64), requests: 9, tokens: 9, last_accessed_at: 1_700_000_000 },
    ],
    upstream_keys: [{ id: u.id, requests: 3, success: 2, failure: 1 }, { id: 999999, requests: 1, success: 1, failure: 0 }],
    flush_id: 'batch-1',
  });
  t.equal(first.status, 200);
  t.same(first.json, { accepted_keys: 2, accepted_upstream_keys: 1 }, 'unknown hashes and upstream ids are not accepted');
  const k1 = (await svc.request('GET', `/admin/keys/${key.id}`, { token: adminToken })).json;
  t.match(k1, { request_count: 3, quota_used: 150, last_accessed_at: new Date(1_700_000_100_000).toISOString() });
  t.equal(await store.hget(`tenancy:token:${hash}`, 'quota_used'), '150', 'the DP sees quota_used');
  const up = (await db.one(sql.unsafe`SELECT requests, success, failure FROM upstream_usage_daily WHERE api_key_id = ${u.id}`)) as object;
  t.same(up, { requests: 3, success: 2, failure: 1 });

  // The same flush id within 10 minutes: acknowledged with the first answer, not applied.
  const again = await flush(svc, { keys: [{ token_hash: hash, requests: 2, tokens: 100, last_accessed_at: 1 }], flush_id: 'batch-1' });
  t.same(again.json, { accepted_keys: 2, accepted_upstream_keys: 1 });
  t.equal((await svc.request('GET', `/admin/keys/${key.id}`, { token: adminToken })).json.quota_used, 150);
  svc.service.clock.advance(11 * 60_000);
  const later = await flush(svc, { keys: [{ token_hash: hash, requests: 1, tokens: 10, last_accessed_at: 0 }], flush_id: 'batch-1' });
  t.same(later.json, { accepted_keys: 1, accepted_upstream_keys: 0 }, 'after 10 minutes the id is new again');
  t.equal((await svc.request('GET', `/admin/keys/${key.id}`, { token: adminToken })).json.quota_used, 160);
  t.equal((await svc.request('GET', `/admin/keys/${key.id}`, { token: adminToken })).json.last_accessed_at, new Date(1_700_000_100_000).toISOString(), 'last access never moves back');

  // Without a flush id every batch counts; empty body is fine.
  t.same((await flush(svc, {})).json, { accepted_keys: 0, accepted_upstream_keys: 0 });

  // Atomic: a failure in the upstream part leaves the key counters untouched, and the id unclaimed.
  await db.query(sql.unsafe`ALTER TABLE upstream_usage_daily RENAME TO upstream_usage_daily_off`);
  const failed = await flush(svc, { keys: [{ token_hash: hash, requests: 1, tokens: 5, last_accessed_at: 0 }], upstream_keys: [{ id: u.id, requests: 1, success: 1, failure: 0 }], flush_id: 'batch-2' });
  t.equal(failed.status, 500);
  t.equal((await svc.request('GET', `/admin/keys/${key.id}`, { token: adminToken })).json.quota_used, 160);
  await db.query(sql.unsafe`ALTER TABLE upstream_usage_daily_off RENAME TO upstream_usage_daily`);
  const retried = await flush(svc, { keys: [{ token_hash: hash, requests: 1, tokens: 5, last_accessed_at: 0 }], upstream_keys: [{ id: u.id, requests: 1, success: 1, failure: 0 }], flush_id: 'batch-2' });
  t.same(retried.json, { accepted_keys: 1, accepted_upstream_keys: 1 });
  t.equal((await svc.request('GET', `/admin/keys/${key.id}`, { token: adminToken })).json.quota_used, 165);

  // Bad inputs and auth.
  for (const body of [
    { keys: [{ token_hash: 'xyz', requests: 1, tokens: 1 }] },
    { keys: [{ token_hash: hash, requests: -1, tokens: 1 }] },
    { keys: [{ token_hash: hash, requests: 1 }] },
    { keys: [{ token_hash: hash, requests: '1', tokens: 1 }] },
    { keys: 'all' },
    { upstream_keys: [{ id: 0, requests: 1, success: 1, failure: 0 }] },
    { upstream_keys: [{ id: 1, requests: 1, success: 1 }] },
    { flush_id: 'x'.repeat(129) },
    { other: 1 },
  ]) {
    const r = await flush(svc, body);
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.equal(r.json.code, 'bad_request');
  }
  // The body is parsed by the actor on a worker thread: the same 400s as on the HTTP thread.
  const field = await flush(svc, { keys: [{ token_hash: 'xyz', requests: 1, tokens: 1 }] });
  t.same(field.json.message, 'invalid body');
  t.same(Object.keys(field.json.data), ['keys.0.token_hash']);
  const internal = { 'x-internal-token': internalToken, 'content-type': 'application/json' };
  const broken = await svc.request('POST', '/internal/stats/flush', { headers: internal, rawBody: '{"keys": [' });
  t.equal(broken.status, 400, 'malformed JSON');
  t.equal(broken.json.message, 'invalid JSON body');
  const empty = await svc.request('POST', '/internal/stats/flush', { headers: internal, rawBody: '' });
  t.same([empty.status, empty.json], [200, { accepted_keys: 0, accepted_upstream_keys: 0 }], 'an empty body is an empty flush');
  t.equal((await svc.request('POST', '/internal/stats/flush', { body: {} })).status, 401);
  t.equal((await svc.request('POST', '/internal/stats/flush', { token: adminToken, body: {} })).status, 401);
});

t.test('quota reset at UTC boundaries, by the background job', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const store = svc.service.context.store;
  // Wednesday 2030-01-15 12:00 UTC.
  svc.service.clock.set(Date.UTC(2030, 0, 15, 12));
  const keys = {
    never: await keyOf(svc, { quota_reset_type: 'never' }),
    daily: await keyOf(svc, { quota_reset_type: 'daily' }),
    weekly: await keyOf(svc, { quota_reset_type: 'weekly' }),
    monthly: await keyOf(svc, { quota_reset_type: 'monthly' }),
  };
  t.equal(keys.weekly.key.quota_period_start, '2030-01-14T00:00:00.000Z', 'weeks start on Monday');
  t.equal(keys.monthly.key.quota_period_start, '2030-01-01T00:00:00.000Z');
  await flush(svc, { keys: Object.values(keys).map((k) => ({ token_hash: k.hash, requests: 1, tokens: 40, last_accessed_at: 0 })) });
  const used = async () => Object.fromEntries(await Promise.all(Object.entries(keys).map(async ([name, k]) =>
    [name, [(await svc.request('GET', `/admin/keys/${k.key.id}`, { token: adminToken })).json.quota_used, await store.hget(`tenancy:token:${k.hash}`, 'quota_used')]])));
  const run = () => svc.service.system.ask<{ reset: number }>('quota-reset', 'run');

  t.same(await run(), { reset: 0 }, 'nothing before a boundary');
  svc.service.clock.set(Date.UTC(2030, 0, 16, 0, 0, 1));
  t.same(await run(), { reset: 1 });
  t.same(await used(), { never: [40, '40'], daily: [0, '0'], weekly: [40, '40'], monthly: [40, '40'] });
  t.same(await run(), { reset: 0 }, 'a second run at the same time changes nothing');
  svc.service.clock.set(Date.UTC(2030, 0, 21, 0, 5)); // Monday
  t.same(await run(), { reset: 2 });
  t.same(await used(), { never: [40, '40'], daily: [0, '0'], weekly: [0, '0'], monthly: [40, '40'] });
  svc.service.clock.set(Date.UTC(2030, 1, 1, 0, 0, 0));
  t.same(await run(), { reset: 3 });
  t.same(await used(), { never: [40, '40'], daily: [0, '0'], weekly: [0, '0'], monthly: [0, '0'] });
  // Changing the reset type starts a new period without resetting what was used.
  const changed = await svc.request('PUT', `/v1/tokens/${keys.never.key.id}`, { token: keys.never.master.master_key, body: { quota_reset_type: 'daily' } });
  t.match(changed.json, { quota_used: 40, quota_reset_type: 'daily', quota_period_start: '2030-02-01T00:00:00.000Z' });
  t.same(await run(), { reset: 0 });
});

t.test('quota reset survives restarts: a boundary missed while down is caught up at start', async (t) => {
  const { url, drop } = await freshDatabase();
  t.teardown(drop);
  const first = await startTestService({ databaseUrl: url, keepData: true });
  first.service.clock.set(Date.now() - 2 * 86_400_000);
  const { key, hash } = await keyOf(first, { quota_reset_type: 'daily' });
  await flush(first, { keys: [{ token_hash: hash, requests: 1, tokens: 70, last_accessed_at: 0 }] });
  t.equal((await first.request('GET', `/admin/keys/${key.id}`, { token: adminToken })).json.quota_used, 70);
  await first.stop();

  const second = await startTestService({ databaseUrl: url, keepData: true });
  t.teardown(() => second.stop());
  const k = await (async () => {
    for (let i = 0; i < 100; i++) {
      const r = (await second.request('GET', `/admin/keys/${key.id}`, { token: adminToken })).json;
      if (r.quota_used === 0) return r;
      await new Promise((res) => setTimeout(res, 50));
    }
    return null;
  })();
  t.ok(k, 'reset at start without any request');
  t.equal(k?.quota_period_start, new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString());
  // The store mirror follows through the outbox, which the relay delivers on its own schedule.
  const stored = () => second.service.context.store.hget(`tenancy:token:${hash}`, 'quota_used');
  await eventually(async () => (await stored()) === '0');
  t.equal(await stored(), '0');
});

t.test('a quota change announces, entry by entry, the ids of the keys it wrote', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const { store, db } = svc.service.context;
  const heard: ConfigChange[] = [];
  const unsubscribe = await store.subscribe(configChannel, (m) => heard.push(JSON.parse(m) as ConfigChange));
  t.teardown(unsubscribe);

  // Larger than one outbox entry (500 ops): each entry names its own keys, none is left unannounced.
  const at = 1_000 + Math.floor(Math.random() * 1e9); // tells this change from other runs' on a shared Redis
  const ids = Array.from({ length: 1203 }, (_, i) => i + 1);
  const hashOf = (id: number) => `announce-${at}-${id}`;
  await db.transaction((tx) => enqueueChange(tx, 'quota', at, ids.map((id) => quotaUsedOp(hashOf(id), id)), ids, true));
  await svc.service.system.ask('outbox', 'kick');
  const ours = () => heard.filter((c) => c.kind === 'quota' && c.at === at);
  await eventually(() => ours().length === 3);
  t.same(ours().map((c) => c.ids), [ids.slice(0, 500), ids.slice(500, 1000), ids.slice(1000)]);
  t.equal(await store.hget(`tenancy:token:${hashOf(1203)}`, 'quota_used'), '1203');

  // A stats flush names the keys it wrote.
  const { key, hash } = await keyOf(svc);
  t.equal((await flush(svc, { keys: [{ token_hash: hash, requests: 1, tokens: 5, last_accessed_at: 0 }] })).status, 200);
  const named = () => heard.some((c) => c.kind === 'quota' && c.ids?.length === 1 && c.ids[0] === key.id);
  t.ok(await eventually(named), 'announced with the key id');
});
