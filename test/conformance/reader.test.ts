import t from 'tap';
import { Redis } from 'ioredis';
import { adminToken, eventually, internalToken, startTestService } from '../helpers/harness.js';
import { Kit, type StepResult } from '../../conformance/kit.js';
import { CachingReader, Reader, readerLayoutVersion } from '../../conformance/reader.js';
import { checkStep } from '../../conformance/run.js';
import { mismatch } from '../../conformance/compare.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
if (!svc.usingRedis) throw new Error('the reference reader reads Redis: this test needs TEST_REDIS_URL to answer');
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const redis = new Redis(redisUrl);
const sub = new Redis(redisUrl);
t.teardown(() => {
  redis.disconnect();
  sub.disconnect();
});
const admin = { token: adminToken };
/** The bound this page states for a refill of an emptied store (docs/store-layout.md): the check interval plus 3 s. */
const refillBoundMs = svc.config.storeCheckMs + 3000;

t.test('a fresh service writes the flags with their defaults, the routing version and the layout version at start', async (t) => {
  t.ok(await eventually(async () => (await redis.get('meta:layout_version')) === String(readerLayoutVersion), 3000), 'layout version written');
  t.same(await new Reader(redis).flags(), {
    dp_state_store_backend: 'memory', dp_proto_cross_upstream: true, log_request_body_enabled: true,
    log_body_retention_days: 30, log_retention_days: 30, log_max_records: 1000000,
  });
  t.same(Object.keys(await redis.hgetall('meta:features')).sort(), ['dp_proto_cross_upstream', 'dp_state_store_backend', 'log_body_retention_days', 'log_request_body_enabled']);
  t.ok(Number(await redis.get('route:version')) > 0, 'a routing version');
  t.ok(await redis.get('cp:store:snapshot'), 'snapshot start marker');
  const health = await svc.request('GET', '/health');
  t.equal(health.json.store_data, 'complete');
});

// Decisions of a reader that follows the announcement channel with a cache that never expires by age:
// only the announcements can make it see a change.
const follower = new CachingReader(redis, 3_600_000);
await sub.subscribe('gateway:config');
sub.on('message', (_channel: string, message: string) => follower.announced(message));

const kit = new Kit({ base: svc.base, adminToken, internalToken });
let last: StepResult | undefined;

t.test('for every key, binding and flag the kit creates, after every kind of change, the reader decides as the hand-written table says', async (t) => {
  await kit.run(async (step) => {
    last = step;
    const problems = await checkStep(redis, step, 5000);
    t.same(problems, [], `step ${step.index}: ${step.name} (${step.cases.length} cases)`);
    // The caching reader is right too, once the step's announcements arrived.
    const stale: string[] = [];
    await eventually(async () => {
      stale.length = 0;
      for (const c of step.cases.filter((c) => c.at_offset_s === 0)) {
        const m = mismatch(await follower.decide({ credential: c.credential, clientIp: c.client_ip, model: c.model, namespace: c.namespace }), c.expected);
        if (m) stale.push(`${c.name}: ${m}`);
      }
      return stale.length === 0;
    }, 5000);
    t.same(stale, [], `step ${step.index}: the announcement-following reader agrees`);
  });
  const kinds = new Set(follower.heard.map((m) => m.kind));
  for (const kind of ['masters', 'keys', 'quota', 'routing', 'features']) t.ok(kinds.has(kind), `announced: ${kind}`);
});

t.test('after FLUSHDB under the running service, every decision is right again within the stated bound', async (t) => {
  const step = last!;
  t.ok(step, 'the kit ran');
  await redis.flushdb();
  const flushedAt = Date.now();
  // Until the refill ends, a known key is "unavailable" (store incomplete), never "unknown".
  const during = await new Reader(redis).decide({ credential: step.cases.find((c) => c.expected.decision === 'allow')!.credential, clientIp: '203.0.113.7', model: 'chat', namespace: '' });
  t.match(during, { decision: 'unavailable', reason: 'store_incomplete' });
  const problems = await checkStep(redis, step, refillBoundMs + 2000);
  const took = Date.now() - flushedAt;
  t.same(problems, [], 'every case right again');
  t.ok(took <= refillBoundMs, `refilled in ${took} ms (bound ${refillBoundMs} ms)`);
  const status = (await svc.request('GET', '/admin/sync/status', admin)).json.store;
  t.match(status, { data: 'complete', layout_version: readerLayoutVersion });
  t.ok(status.refills >= 1);
  t.match(status.last_refill, { reason: 'empty' });
  t.ok(Date.parse(status.last_refill.completed_at) >= Date.parse(status.last_refill.started_at));
});

t.test('/health and /admin/sync/status say so while the store is refilled', async (t) => {
  const refillsBefore = (await svc.request('GET', '/admin/sync/status', admin)).json.store.refills;
  await redis.flushdb();
  // /health reads the markers at once: it finds the store empty, starts the refill and says so.
  const health = await svc.request('GET', '/health');
  t.match(health.json, { status: 'degraded', store: 'up', store_data: 'refilling' });
  t.equal(health.status, 200, 'the node still serves');
  const status = (await svc.request('GET', '/admin/sync/status', admin)).json.store;
  t.equal(status.refills, refillsBefore + 1, 'the sync status counts the refill');
  t.match(status.last_refill, { reason: 'empty' });
  t.ok(await eventually(async () => (await svc.request('GET', '/health')).json.store_data === 'complete', refillBoundMs));
  t.equal((await svc.request('GET', '/health')).json.status, 'ok');
});

t.test('POST /admin/sync/snapshot writes every key the data plane reads, tenancy included', async (t) => {
  const step = last!;
  const tenancy = [...(await redis.keys('tenancy:*'))];
  t.ok(tenancy.length > 10, `${tenancy.length} tenancy keys`);
  await redis.del(...tenancy);
  const answer = await svc.request('POST', '/admin/sync/snapshot', admin);
  t.equal(answer.status, 200);
  t.match(answer.json, { status: 'ok', reason: 'admin' });
  t.ok(answer.json.masters >= 2 && answer.json.keys >= 11, `${answer.json.masters} masters, ${answer.json.keys} keys`);
  t.same(await checkStep(redis, step, 5000), []);
  t.same((await redis.keys('tenancy:*')).sort(), tenancy.sort(), 'the same tenancy keys again');
});

t.test('a store emptied while a snapshot was delivered, or written under another layout, is refilled', async (t) => {
  const step = last!;
  // Emptied mid-snapshot: the layout version (written last) is there, the start marker (written first) is not.
  await redis.del('cp:store:snapshot', ...(await redis.keys('tenancy:token:*')));
  t.equal((await svc.request('GET', '/admin/sync/status', admin)).json.store.data, 'refilling');
  t.same(await checkStep(redis, step, refillBoundMs), []);
  t.equal((await svc.request('GET', '/admin/sync/status', admin)).json.store.last_refill.reason, 'emptied_during_snapshot');
  // An older layout version in the store: rewritten in this one.
  await redis.set('meta:layout_version', '1');
  t.ok(await eventually(async () => (await redis.get('meta:layout_version')) === String(readerLayoutVersion), refillBoundMs));
  t.equal((await svc.request('GET', '/admin/sync/status', admin)).json.store.last_refill.reason, 'layout_version');
});

t.test('a lapsed upstream-key ban reaches the store within the ban interval (5 s) plus one delivery', async (t) => {
  const gb1 = kit.created.upstreamKeys.gb1!;
  const ns = kit.ns('dev');
  const reader = new Reader(redis);
  t.match(await reader.route(ns, 'chat'), { decision: 'unavailable', reason: 'no_upstream' }, 'banned for an hour by the kit');
  const until = Math.ceil(Date.now() / 1000) + 1;
  const put = await svc.request('PUT', `/admin/api-keys/${gb1}`, { ...admin, body: { ban_until: new Date(until * 1000).toISOString() } });
  t.equal(put.status, 200);
  const back = await eventually(async () => (await reader.route(ns, 'chat')).decision === 'allow', 9000, 100);
  const late = Date.now() - until * 1000;
  t.ok(back, 'the key is back in the store');
  t.ok(late <= 5000 + 1500, `${late} ms after ban_until`);
});

t.test('weighted picks: a candidate by weight / total, then a key by weight / total', async (t) => {
  const candidates = [
    { group_id: 1, group_name: 'a', upstream_model: 'm', weight: 70, keys: [{ id: 1, weight: 3 }, { id: 2, weight: 1 }] },
    { group_id: 2, group_name: 'b', upstream_model: 'm', weight: 30, keys: [{ id: 3, weight: 1 }] },
  ];
  const at = (...r: number[]) => {
    let i = 0;
    const p = Reader.pick(candidates, () => r[i++]!);
    return [p.candidate.group_id, p.key.id];
  };
  t.same(at(0.69, 0.74), [1, 1]);
  t.same(at(0.69, 0.76), [1, 2]);
  t.same(at(0.71, 0.5), [2, 3]);
});
