/**
 * The statistics cache through HTTP: a repeated read is served from the cache
 * with the same answer; an insert for the same master, a deletion or a moving
 * minute make the next read go to ClickHouse and see the change; an insert for
 * another master leaves a tenant's answer cached but not the global ones;
 * concurrent identical reads share one query. The embedded store keeps the
 * hit and miss counts of this file to itself (the Redis generations are shared
 * between nodes; test/analytics/cache-nodes.test.ts covers them).
 */
import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';

const svc = await startTestService({ embedded: true });
t.teardown(() => svc.stop());
let now = Date.parse('2025-03-10T12:00:30Z');
const get = (path: string, token = adminToken) => {
  svc.service.clock.set(now);
  return svc.request('GET', path, { token });
};

/** stats_cache_reads_total by result, from /metrics. */
async function reads(): Promise<{ hit: number; miss: number }> {
  const text = (await svc.request('GET', '/metrics', { token: adminToken })).text;
  const value = (result: string) => Number(new RegExp(`^stats_cache_reads_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1]);
  return { hit: value('hit'), miss: value('miss') };
}

/** How many reads hit and missed while `fn` ran. */
async function counted(fn: () => Promise<unknown>): Promise<{ hit: number; miss: number }> {
  const before = await reads();
  await fn();
  const after = await reads();
  return { hit: after.hit - before.hit, miss: after.miss - before.miss };
}

const rec = (master: number, createdAt: string, f: Record<string, unknown> = {}) => ({
  master_id: master, key_id: master * 10, model: 'alpha', status_code: 200, latency_ms: 100, tokens_in: 10, tokens_out: 0, createdAt, ...f,
});
async function ingest(records: unknown[]): Promise<void> {
  const r = await svc.request('POST', '/logs', { body: records });
  if (r.status !== 202) throw new Error(`ingest answered ${r.status}`);
  await svc.service.system.ask('logs', 'flush');
}

let m1: { id: number; master_key: string };
let m2: { id: number; master_key: string };
t.before(async () => {
  const mk = async (name: string) => {
    const r = await svc.request('POST', '/admin/masters', { token: adminToken, body: { name, group: 'default' } });
    if (r.status !== 201) throw new Error(`create master: ${r.status} ${r.text}`);
    return r.json;
  };
  m1 = await mk('one');
  m2 = await mk('two');
  await ingest([rec(m1.id, '2025-03-10T01:00:00Z'), rec(m1.id, '2025-03-10T02:00:00Z', { status_code: 502 }), rec(m2.id, '2025-03-10T03:00:00Z')]);
});

const summary = '/admin/dashboard/summary?period=today&include_trends=true';

t.test('a repeated read is served from the cache, with the same answer', async (t) => {
  let first: unknown;
  t.same(await counted(async () => (first = (await get('/v1/stats?period=today', m1.master_key)).json)), { hit: 0, miss: 1 });
  t.equal((first as { totals: { requests: number } }).totals.requests, 2);
  let second: unknown;
  t.same(await counted(async () => (second = (await get('/v1/stats?period=today', m1.master_key)).json)), { hit: 1, miss: 0 });
  t.same(second, first);
  t.same(await counted(() => get(summary)), { hit: 0, miss: 1 });
  t.same(await counted(() => get(summary)), { hit: 1, miss: 0 });
});

t.test("another master's logs leave a tenant's answer cached, not the global ones", async (t) => {
  await ingest([rec(m2.id, '2025-03-10T04:00:00Z')]);
  t.same(await counted(() => get('/v1/stats?period=today', m1.master_key)), { hit: 1, miss: 0 });
  let s: { requests: number } = { requests: 0 };
  t.same(await counted(async () => (s = (await get(summary)).json)), { hit: 0, miss: 1 });
  t.equal(s.requests, 4, 'the summary sees the new record');
});

t.test("the master's own logs make its next read fresh", async (t) => {
  await ingest([rec(m1.id, '2025-03-10T05:00:00Z', { tokens_in: 90 })]);
  let st: { totals: { requests: number; tokens: number } } | undefined;
  t.same(await counted(async () => (st = (await get('/v1/stats?period=today', m1.master_key)).json)), { hit: 0, miss: 1 });
  t.same([st!.totals.requests, st!.totals.tokens], [3, 110]);
});

t.test('a deletion makes every next read fresh', async (t) => {
  const del = await svc.request('DELETE', `/admin/logs?before=2025-03-10T01:30:00Z&master_id=${m1.id}`, { token: adminToken });
  t.equal(del.status, 200);
  t.equal(del.json.deleted, 1);
  let st: { totals: { requests: number } } | undefined;
  t.same(await counted(async () => (st = (await get('/v1/stats?period=today', m1.master_key)).json)), { hit: 0, miss: 1 });
  t.equal(st!.totals.requests, 2);
  let s: { requests: number } = { requests: 0 };
  t.same(await counted(async () => (s = (await get(summary)).json)), { hit: 0, miss: 1 });
  t.equal(s.requests, 4);
});

t.test('within a second the answer is shared; the next second reads again', async (t) => {
  // Ranges are exact to the second, so a period ending now is a new range (new SQL) each second.
  const path = '/v1/stats?period=today';
  now = Math.floor(now / 1000) * 1000 + 1000 + 100; // x.100 of a fresh second
  await get(path, m1.master_key);
  now += 500; // x.600: the same second
  const same = await counted(() => get(path, m1.master_key));
  t.same(same, { hit: 1, miss: 0 });
  now += 500; // the next second
  const next = await counted(() => get(path, m1.master_key));
  t.same(next, { hit: 0, miss: 1 });
});

t.test('identical reads in flight at once share one query', async (t) => {
  const path = `/admin/logs/stats?group_by=model&since=${Date.parse('2025-03-01T00:00:00Z') / 1000}&until=${Date.parse('2025-03-11T00:00:00Z') / 1000}`;
  let answers: Array<{ status: number; json: unknown }> = [];
  const n = await counted(async () => (answers = await Promise.all(Array.from({ length: 6 }, () => get(path)))));
  t.same(n, { hit: 5, miss: 1 });
  t.ok(answers.every((a) => a.status === 200));
  t.same(new Set(answers.map((a) => JSON.stringify(a.json))).size, 1, 'every caller got the same answer');
});

t.test('one cached read serves charts of every top_n, each its own series', async (t) => {
  // top_n is not in the SQL: both charts share one cached read, and what is derived from it (derived.ts) must not.
  await ingest([
    ...[1, 2, 3].map((i) => rec(m2.id, `2025-03-09T07:0${i}:00Z`, { model: 'beta' })),
    ...[1, 2].map((i) => rec(m2.id, `2025-03-09T08:0${i}:00Z`, { model: 'gamma' })),
    rec(m2.id, '2025-03-09T09:01:00Z', { model: 'alpha' }),
  ]);
  const since = Date.parse('2025-03-09T06:00:00Z') / 1000;
  const chart = (topN: number) => get(`/admin/logs/stats/traffic-chart?granularity=hour&since=${since}&until=${since + 6 * 3600}&top_n=${topN}`);
  const names = (r: { json: { series: Array<{ name: string; total: number }> } }) => r.json.series.map((s) => `${s.name}:${s.total}`);
  let one: any;
  let two: any;
  let oneAgain: any;
  t.same(await counted(async () => (one = await chart(1))), { hit: 0, miss: 1 });
  t.same(await counted(async () => (two = await chart(2))), { hit: 1, miss: 0 });
  t.same(await counted(async () => (oneAgain = await chart(1))), { hit: 1, miss: 0 });
  t.same(names(one), ['beta:3', 'other:3']);
  t.same(names(two), ['beta:3', 'gamma:2', 'other:1']);
  t.same(oneAgain.json, one.json, 'the first answer again, not the second');
  t.same(two.json.series[1].data, [0, 0, 2, 0, 0, 0], 'gamma in its hour');
});
