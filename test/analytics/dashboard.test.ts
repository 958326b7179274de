/**
 * Dashboard summary with trends (every direction), entity counts, realtime
 * figures (system, master, tenant, embedded in the master view), tenant stats
 * and tenant isolation, on hand-computed data with the clock pinned.
 */
import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';
import { trend } from '../../src/actors/analytics/trends.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
const now = Date.parse('2025-03-10T12:00:30Z');
svc.service.clock.set(now);
const s = (iso: string): number => Date.parse(iso) / 1000;
const admin = { token: adminToken };
// The clock runs on after set(); realtime answers use whole seconds, so pinning before each call makes them exact.
const get = (path: string, token = adminToken) => {
  svc.service.clock.set(now);
  return svc.request('GET', path, { token });
};

let m1: { id: number; master_key: string };
let m2: { id: number; master_key: string };

const rec = (master: number, createdAt: string, f: Record<string, unknown> = {}) => ({
  master_id: master, key_id: master * 10, model: 'alpha', status_code: 200, latency_ms: 100, tokens_in: 10, tokens_out: 0, createdAt, ...f,
});

t.before(async () => {
  const mk = async (name: string, global_qps: number) => {
    const r = await svc.request('POST', '/admin/masters', { ...admin, body: { name, group: 'default', global_qps } });
    if (r.status !== 201) throw new Error(`create master: ${r.status} ${r.text}`);
    return r.json;
  };
  m1 = await mk('one', 10);
  m2 = await mk('two', 1);
  const gone = await mk('gone', 0);
  for (const m of [m1, m1, gone]) await svc.request('POST', `/admin/masters/${m.id}/keys`, { ...admin, body: {} });
  const k = await svc.request('POST', `/admin/masters/${m1.id}/keys`, { ...admin, body: {} });
  await svc.request('POST', `/admin/masters/${m1.id}/keys/${k.json.id}/revoke`, admin);
  await svc.request('DELETE', `/admin/masters/${gone.id}`, admin);
  const g = await svc.request('POST', '/admin/provider-groups', { ...admin, body: { name: 'oa', type: 'openai', base_url: 'http://api.openai.com/v1' } });
  for (const api_key of ['sk-aaaaaaaa1111', 'sk-bbbbbbbb2222']) {
    const r = await svc.request('POST', '/admin/api-keys', { ...admin, body: { group_id: g.json.id, api_key } });
    if (r.status !== 201) throw new Error(`api key: ${r.status} ${r.text}`);
  }

  const records = [
    // today (00:00 to 12:00:30): master 1, 4 requests, 1 error, latency 100, 10 tokens each
    rec(m1.id, '2025-03-10T01:00:00Z'),
    rec(m1.id, '2025-03-10T02:00:00Z'),
    rec(m1.id, '2025-03-10T03:00:00Z', { status_code: 502 }),
    rec(m1.id, '2025-03-10T11:58:00Z', { model: 'beta' }),
    // yesterday up to 12:00:30: master 2, 2 requests, latency 100, 20 tokens each
    rec(m2.id, '2025-03-09T06:00:00Z', { tokens_in: 20 }),
    rec(m2.id, '2025-03-09T07:00:00Z', { tokens_in: 20 }),
    // yesterday after 12:00:30: in last7d, not in the previous "today"
    rec(m2.id, '2025-03-09T18:00:00Z', { tokens_in: 0 }),
    // previous 7 days (2025-02-24 12:00:30 to 2025-03-03 12:00:30): 3 requests, latency 200, 100 tokens each
    rec(m1.id, '2025-02-25T00:00:00Z', { latency_ms: 200, tokens_in: 100 }),
    rec(m1.id, '2025-02-26T00:00:00Z', { latency_ms: 200, tokens_in: 100 }),
    rec(m1.id, '2025-02-27T00:00:00Z', { latency_ms: 200, tokens_in: 100 }),
    // realtime windows (now 12:00:30; last minute from 11:59:00, last 5 minutes from 11:55:00)
    rec(m1.id, '2025-03-10T11:59:10Z', { tokens_in: 5, tokens_out: 1 }),
    rec(m1.id, '2025-03-10T11:59:50Z', { tokens_in: 5, tokens_out: 1 }),
    rec(m1.id, '2025-03-10T12:00:10Z', { tokens_in: 5, tokens_out: 1, status_code: 429 }),
    rec(m1.id, '2025-03-10T11:56:00Z', { tokens_in: 5, tokens_out: 1 }),
    rec(m1.id, '2025-03-10T11:54:59.999Z', { tokens_in: 5, tokens_out: 1 }),
    // master 2 at its limit of 1 QPS: 90 requests in the 90-second last-minute window
    ...Array.from({ length: 90 }, () => rec(m2.id, '2025-03-10T12:00:20Z', { tokens_in: 1, model: 'gamma' })),
  ];
  const r = await svc.request('POST', '/logs', { body: records });
  if (r.status !== 202) throw new Error(`ingest: ${r.status} ${r.text}`);
  await svc.service.system.ask('logs', 'flush');
});

t.test('trend rules', async (t) => {
  t.same(trend(4, 2, false), { value: 4, previous: 2, delta_percent: 100, direction: 'up' });
  t.same(trend(1, 3, false), { value: 1, previous: 3, delta_percent: -66.67, direction: 'down' });
  t.same(trend(5, 5, false), { value: 5, previous: 5, delta_percent: 0, direction: 'flat' });
  t.same(trend(0, 0, false), { value: 0, previous: 0, delta_percent: 0, direction: 'flat' });
  t.same(trend(3, 0, false), { value: 3, previous: 0, delta_percent: null, direction: 'up' }, 'rising from zero');
  t.same(trend(0.25, 0, true), { value: 0.25, previous: 0, delta_percent: null, direction: 'new' }, 'ratio from zero');
  t.same(trend(100, null, true), { value: 100, previous: null, delta_percent: null, direction: 'new' }, 'ratio missing');
  t.same(trend(0.1, 0.2, true), { value: 0.1, previous: 0.2, delta_percent: -50, direction: 'down' });
});

const figures = (j: Record<string, unknown>) => ({
  requests: j.requests, errors: j.errors, error_rate: j.error_rate, tokens_in: j.tokens_in, tokens_out: j.tokens_out,
  tokens: j.tokens, avg_latency_ms: j.avg_latency_ms,
});

t.test('summary today with trends: up, up from zero, flat, new', async (t) => {
  const r = await get('/admin/dashboard/summary?period=today&include_trends=true');
  t.equal(r.status, 200);
  // today: 4 + 5 realtime records (one 11:54:59 is today too) + 90 of master 2
  const todaySince = s('2025-03-10T00:00:00Z');
  t.equal(r.json.since, todaySince);
  t.equal(r.json.until, s('2025-03-10T12:00:30Z'));
  t.same(figures(r.json), {
    requests: 99, errors: 2, error_rate: 0.0202, tokens_in: 40 + 25 + 90, tokens_out: 5, tokens: 160, avg_latency_ms: 100,
  });
  t.same({ masters: r.json.masters, keys: r.json.keys, upstream_keys: r.json.upstream_keys }, { masters: 2, keys: 2, upstream_keys: 2 },
    'deleted master and its key, and the revoked key, are not counted');
  t.same(r.json.previous, { since: todaySince - 86400, until: s('2025-03-09T12:00:30Z') });
  t.same(r.json.trends, {
    requests: { value: 99, previous: 2, delta_percent: 4850, direction: 'up' },
    errors: { value: 2, previous: 0, delta_percent: null, direction: 'up' },
    tokens: { value: 160, previous: 40, delta_percent: 300, direction: 'up' },
    cost: { value: 0, previous: 0, delta_percent: 0, direction: 'flat' },
    error_rate: { value: 0.0202, previous: 0, delta_percent: null, direction: 'new' },
    avg_latency_ms: { value: 100, previous: 100, delta_percent: 0, direction: 'flat' },
  });
  const plain = await get('/admin/dashboard/summary');
  t.equal(plain.json.period, 'today', 'period defaults to today');
  t.notOk('trends' in plain.json, 'no trends unless asked');
});

t.test('summary last7d: down; last30d: previous period empty; all: no trends', async (t) => {
  const w = await get('/admin/dashboard/summary?period=last7d&include_trends=true');
  t.equal(w.status, 200);
  t.same(figures(w.json), { requests: 102, errors: 2, error_rate: 0.0196, tokens_in: 155 + 40, tokens_out: 5, tokens: 200, avg_latency_ms: 100 });
  t.same(w.json.trends, {
    requests: { value: 102, previous: 3, delta_percent: 3300, direction: 'up' },
    errors: { value: 2, previous: 0, delta_percent: null, direction: 'up' },
    tokens: { value: 200, previous: 300, delta_percent: -33.33, direction: 'down' },
    cost: { value: 0, previous: 0, delta_percent: 0, direction: 'flat' },
    error_rate: { value: 0.0196, previous: 0, delta_percent: null, direction: 'new' },
    avg_latency_ms: { value: 100, previous: 200, delta_percent: -50, direction: 'down' },
  });
  const m = await get('/admin/dashboard/summary?period=last30d&include_trends=true');
  t.equal(m.json.requests, 105);
  t.same(m.json.trends.requests, { value: 105, previous: 0, delta_percent: null, direction: 'up' });
  t.same(m.json.trends.avg_latency_ms, { value: 102.86, previous: null, delta_percent: null, direction: 'new' }, 'latency missing before');
  t.same(m.json.trends.error_rate.direction, 'new');
  const all = await get('/admin/dashboard/summary?period=all&include_trends=true');
  t.equal(all.json.since, 0);
  t.equal(all.json.requests, 105);
  t.equal(all.json.trends, null);
  t.equal(all.json.previous, null);
});

t.test('realtime: system, per master, rate-limit status, embedded in the master view', async (t) => {
  const sys = await get('/admin/realtime');
  t.equal(sys.status, 200);
  t.same(sys.json, {
    at: s('2025-03-10T12:00:30Z'),
    // 11:59:10, 11:59:50, 12:00:10 (master 1) + 90 at 12:00:20 (master 2)
    last_minute: { since: s('2025-03-10T11:59:00Z'), seconds: 90, requests: 93, errors: 1, tokens_in: 105, tokens_out: 3, tokens: 108, cost: 0, unpriced: 93, qps: 1.033 },
    // + 11:56:00 and 11:58:00 (master 1); 11:54:59.999 is before the window
    last_5_minutes: { since: s('2025-03-10T11:55:00Z'), seconds: 330, requests: 95, errors: 1, tokens_in: 120, tokens_out: 4, tokens: 124, cost: 0, unpriced: 95, qps: 0.288 },
  });
  const one = await get(`/admin/masters/${m1.id}/realtime`);
  t.same(one.json.last_minute, { since: s('2025-03-10T11:59:00Z'), seconds: 90, requests: 3, errors: 1, tokens_in: 15, tokens_out: 3, tokens: 18, cost: 0, unpriced: 3, qps: 0.033 });
  t.same(one.json.last_5_minutes.requests, 5);
  t.same(one.json.rate_limit, { limit: 10, current_qps: 0.033, utilization: 0.0033, limited: false });
  const two = await get(`/admin/masters/${m2.id}/realtime`);
  t.same(two.json.rate_limit, { limit: 1, current_qps: 1, utilization: 1, limited: true }, 'at its global_qps');
  const view = await get(`/admin/masters/${m1.id}`);
  t.equal(view.status, 200);
  t.equal(view.json.name, 'one');
  t.equal(view.json.global_qps, 10);
  t.same(view.json.realtime, one.json, 'the master view embeds the same realtime figures');
  t.equal((await get('/admin/masters/999999/realtime')).status, 404);
  t.equal((await get('/admin/masters/999999')).json.code, 'not_found');
  await svc.request('PUT', `/admin/masters/${m1.id}`, { ...admin, body: { global_qps: 0 } });
  t.same((await get(`/admin/masters/${m1.id}/realtime`)).json.rate_limit, { limit: 0, current_qps: 0.033, utilization: 0, limited: false }, '0 = unlimited');

  svc.service.clock.set(now + 10 * 60_000);
  const later = await svc.request('GET', '/admin/realtime', admin);
  t.same([later.json.last_minute.requests, later.json.last_5_minutes.requests], [0, 0], 'ten minutes later the windows are empty');
});

t.test('tenant: /v1/realtime and /v1/stats see only their own master', async (t) => {
  const rt = await get('/v1/realtime', m2.master_key);
  t.equal(rt.status, 200);
  t.same([rt.json.last_minute.requests, rt.json.rate_limit.limited], [90, true]);

  const st = await get('/v1/stats?period=today', m1.master_key);
  t.equal(st.status, 200);
  t.same(st.json.totals, { requests: 9, errors: 2, error_rate: 0.2222, tokens_in: 65, tokens_out: 5, tokens: 70, cost: 0, unpriced: 9, avg_latency_ms: 100 });
  t.same(st.json.by_model.map((i: { key: string; requests: number }) => [i.key, i.requests]), [['alpha', 8], ['beta', 1]]);
  t.same(st.json.by_day.map((i: { key: string; requests: number }) => [i.key, i.requests]), [['2025-03-10', 9]]);
  t.equal(st.json.by_day[0].p50_latency_ms, 100);

  const st2 = await get('/v1/stats?period=last7d', m2.master_key);
  t.same(st2.json.by_day.map((i: { key: string; requests: number; tokens: number }) => [i.key, i.requests, i.tokens]), [
    ['2025-03-09', 3, 40],
    ['2025-03-10', 90, 90],
  ], 'master 2 sees its own days only');
  t.same(st2.json.by_model.map((i: { key: string }) => i.key), ['gamma', 'alpha']);
  t.same((await get('/v1/stats', m1.master_key)).json.period, 'today');
  const m30 = await get('/v1/stats?period=last30d', m1.master_key);
  t.equal(m30.json.totals.requests, 12);
  t.equal(m30.json.since, s('2025-02-08T12:00:30Z'));

  const bad = await get('/v1/stats?period=all', m1.master_key);
  t.equal(bad.status, 400);
  t.equal(bad.json.code, 'bad_request');
  t.ok(bad.json.data.period ?? bad.json.data['query.period']);
  t.equal((await get('/v1/stats?period=today', adminToken)).status, 401, 'the admin token is not a master key');
  t.equal((await svc.request('GET', '/v1/realtime')).status, 401);
});

t.test('summary parameter errors', async (t) => {
  for (const q of ['period=yesterday', 'period=', 'include_trends=maybe']) {
    const r = await get(`/admin/dashboard/summary?${q}`);
    t.equal(r.status, 400, q);
    t.equal(r.json.code, 'bad_request', q);
  }
});
