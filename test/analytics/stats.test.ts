/**
 * GET /admin/logs/stats and /admin/logs/stats/traffic-chart on a small known
 * data set: UTC bucket edges, range edges read from two rollups, filters,
 * zero-filling, the `other` series, and parameter errors.
 */
import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
svc.service.clock.set(Date.parse('2025-03-10T12:00:30Z'));

const s = (iso: string): number => Date.parse(iso) / 1000;
const get = (path: string) => svc.request('GET', path, { token: adminToken });

// master 1 / key 11 and master 2 / key 22; hand-computed expectations below.
const records = [
  { master_id: 1, key_id: 11, model: 'alpha', status_code: 200, latency_ms: 100, tokens_in: 10, tokens_out: 5, createdAt: '2025-03-10T10:59:59.999Z' },
  { master_id: 1, key_id: 11, model: 'alpha', status_code: 500, latency_ms: 300, tokens_in: 20, tokens_out: 10, createdAt: '2025-03-10T11:00:00.000Z' },
  { master_id: 2, key_id: 22, model: 'beta', status_code: 200, latency_ms: 200, tokens_in: 1, tokens_out: 1, createdAt: '2025-03-10T11:30:00.000Z' },
  { master_id: 2, key_id: 22, model: 'alpha', status_code: 404, latency_ms: 50, tokens_in: 7, tokens_out: 3, createdAt: '2025-03-09T23:59:59.999Z' },
  { master_id: 1, key_id: 11, model: 'gamma', status_code: 200, latency_ms: 400, tokens_in: 100, tokens_out: 50, createdAt: '2025-02-28T12:00:00.000Z' },
];
t.before(async () => {
  const ingest = await svc.request('POST', '/logs', { body: records });
  if (ingest.status !== 202) throw new Error(`ingest answered ${ingest.status}`);
  await svc.service.system.ask('logs', 'flush');
});

// No record's model is in the registry: every record is unpriced (cost 0).
const item = (key: string, start: number | null, f: Partial<Record<string, number>>) => ({
  key, start, requests: 0, errors: 0, error_rate: 0, tokens_in: 0, tokens_out: 0, tokens: 0, cost: 0, unpriced: f.requests ?? 0,
  avg_latency_ms: 0, p50_latency_ms: 0, p95_latency_ms: 0, p99_latency_ms: 0, ...f,
});
const one = (key: string, start: number | null, lat: number, tin: number, tout: number, errors = 0) =>
  item(key, start, {
    requests: 1, errors, error_rate: errors, tokens_in: tin, tokens_out: tout, tokens: tin + tout,
    avg_latency_ms: lat, p50_latency_ms: lat, p95_latency_ms: lat, p99_latency_ms: lat,
  });

t.test('group_by hour: 10:59:59.999 and 11:00:00.000 fall in different UTC hours', async (t) => {
  const r = await get(`/admin/logs/stats?group_by=hour&since=${s('2025-03-10T10:00:00Z')}&until=${s('2025-03-10T12:00:00Z')}`);
  t.equal(r.status, 200);
  t.same(r.json, {
    group_by: 'hour', since: s('2025-03-10T10:00:00Z'), until: s('2025-03-10T12:00:00Z'),
    items: [
      one('2025-03-10T10:00:00Z', s('2025-03-10T10:00:00Z'), 100, 10, 5),
      item('2025-03-10T11:00:00Z', s('2025-03-10T11:00:00Z'), {
        requests: 2, errors: 1, error_rate: 0.5, tokens_in: 21, tokens_out: 11, tokens: 32,
        avg_latency_ms: 250, p50_latency_ms: 250, p95_latency_ms: 295, p99_latency_ms: 299,
      }),
    ],
  });
});

t.test('group_by minute, day, month', async (t) => {
  const min = await get(`/admin/logs/stats?group_by=minute&since=${s('2025-03-10T10:55:00Z')}&until=${s('2025-03-10T11:35:00Z')}`);
  t.equal(min.status, 200);
  t.same(min.json.items.map((i: { key: string; requests: number }) => [i.key, i.requests]), [
    ['2025-03-10T10:59:00Z', 1], ['2025-03-10T11:00:00Z', 1], ['2025-03-10T11:30:00Z', 1],
  ]);
  const day = await get(`/admin/logs/stats?group_by=day&since=${s('2025-02-28T00:00:00Z')}&until=${s('2025-03-11T00:00:00Z')}`);
  t.same(day.json.items, [
    one('2025-02-28', s('2025-02-28T00:00:00Z'), 400, 100, 50),
    one('2025-03-09', s('2025-03-09T00:00:00Z'), 50, 7, 3, 1),
    item('2025-03-10', s('2025-03-10T00:00:00Z'), {
      requests: 3, errors: 1, error_rate: 0.3333, tokens_in: 31, tokens_out: 16, tokens: 47,
      avg_latency_ms: 200, p50_latency_ms: 200, p95_latency_ms: 290, p99_latency_ms: 298,
    }),
  ]);
  const month = await get(`/admin/logs/stats?group_by=month&since=${s('2025-02-01T00:00:00Z')}&until=${s('2025-04-01T00:00:00Z')}`);
  t.same(month.json.items.map((i: { key: string; start: number; requests: number; tokens: number }) => [i.key, i.start, i.requests, i.tokens]), [
    ['2025-02', s('2025-02-01T00:00:00Z'), 1, 150],
    ['2025-03', s('2025-03-01T00:00:00Z'), 4, 57],
  ]);
});

t.test('percentiles=false: the same items without the latency percentiles, for every group_by', async (t) => {
  for (const groupBy of ['hour', 'day', 'month', 'model', 'minute']) {
    const range = groupBy === 'minute' ? `since=${s('2025-03-10T10:55:00Z')}&until=${s('2025-03-10T11:35:00Z')}` : `since=${s('2025-02-01T00:00:00Z')}&until=${s('2025-03-11T00:00:00Z')}`;
    const full = await get(`/admin/logs/stats?group_by=${groupBy}&${range}`);
    const lean = await get(`/admin/logs/stats?group_by=${groupBy}&${range}&percentiles=false`);
    t.equal(lean.status, 200);
    t.ok(full.json.items.length > 0, `${groupBy}: items to compare`);
    const stripped = full.json.items.map(({ p50_latency_ms: _a, p95_latency_ms: _b, p99_latency_ms: _c, ...rest }: Record<string, unknown>) => rest);
    t.same(lean.json.items, stripped, `${groupBy}: every other figure as with percentiles`);
    t.ok(lean.json.items.every((i: Record<string, unknown>) => !('p50_latency_ms' in i) && !('p99_latency_ms' in i)), `${groupBy}: no percentile field`);
  }
  const bad = await get('/admin/logs/stats?percentiles=maybe');
  t.equal(bad.status, 400, 'a value that is not a boolean is refused');
});

t.test('group_by model (the default): busiest first, with average latency', async (t) => {
  const r = await get(`/admin/logs/stats?since=${s('2025-02-01T00:00:00Z')}&until=${s('2025-03-11T00:00:00Z')}`);
  t.equal(r.json.group_by, 'model');
  t.same(r.json.items, [
    item('alpha', null, {
      requests: 3, errors: 2, error_rate: 0.6667, tokens_in: 37, tokens_out: 18, tokens: 55,
      avg_latency_ms: 150, p50_latency_ms: 100, p95_latency_ms: 280, p99_latency_ms: 296,
    }),
    one('beta', null, 200, 1, 1),
    one('gamma', null, 400, 100, 50),
  ]);
});

t.test('ranges are exact to the minute across rollups (partial hours come from logs_minute)', async (t) => {
  const count = async (since: string, until: string, extra = '') => {
    const r = await get(`/admin/logs/stats?group_by=model&since=${s(since)}&until=${s(until)}${extra}`);
    t.equal(r.status, 200);
    return r.json.items.map((i: { key: string; requests: number }) => `${i.key}:${i.requests}`);
  };
  t.same(await count('2025-03-10T10:30:00Z', '2025-03-10T11:00:00Z'), ['alpha:1'], 'only the 10:59 record');
  t.same(await count('2025-03-10T11:00:00Z', '2025-03-10T11:30:00Z'), ['alpha:1'], 'until is exclusive: 11:30 excluded');
  t.same(await count('2025-03-10T10:30:00Z', '2025-03-10T12:00:00Z'), ['alpha:2', 'beta:1'], 'minute edge + whole hour');
  t.same(await count('2025-03-09T23:59:00Z', '2025-03-10T11:01:00Z'), ['alpha:3'], 'minutes on both sides of whole hours');
  t.same(await count('2025-03-10T11:00:00Z', '2025-03-10T11:00:01Z'), ['alpha:1'], 'a sub-minute until rounds up to its minute');
});

t.test('master, key and model filters', async (t) => {
  const keys = async (extra: string, groupBy = 'model') => {
    const r = await get(`/admin/logs/stats?group_by=${groupBy}&since=${s('2025-02-01T00:00:00Z')}&until=${s('2025-03-11T00:00:00Z')}${extra}`);
    t.equal(r.status, 200);
    return r.json.items.map((i: { key: string; requests: number; tokens: number }) => `${i.key}:${i.requests}:${i.tokens}`);
  };
  t.same(await keys('&master_id=1'), ['alpha:2:45', 'gamma:1:150']);
  t.same(await keys('&master_id=2'), ['alpha:1:10', 'beta:1:2']);
  t.same(await keys('&key_id=22&model=alpha'), ['alpha:1:10']);
  t.same(await keys('&model=alpha', 'day'), ['2025-03-09:1:10', '2025-03-10:2:45']);
  t.same(await keys('&master_id=1', 'hour'), ['2025-02-28T12:00:00Z:1:150', '2025-03-10T10:00:00Z:1:15', '2025-03-10T11:00:00Z:1:30']);
  t.same(await keys('&master_id=3'), []);
});

t.test('traffic chart: shared zero-filled axis, top_n and other', async (t) => {
  const since = s('2025-03-10T09:00:00Z');
  const until = s('2025-03-10T12:00:00Z');
  const x = [since, since + 3600, since + 7200];
  const r = await get(`/admin/logs/stats/traffic-chart?since=${since}&until=${until}&top_n=1`);
  t.equal(r.status, 200);
  t.same(r.json, {
    granularity: 'hour', metric: 'requests', since, until, top_n: 1, x,
    series: [
      { name: 'alpha', total: 2, data: [0, 1, 1] },
      { name: 'other', total: 1, data: [0, 0, 1] },
    ],
  });
  const all = await get(`/admin/logs/stats/traffic-chart?since=${since}&until=${until}&metric=tokens`);
  t.same(all.json.top_n, 5, 'top_n defaults to 5');
  t.same(all.json.series, [
    { name: 'alpha', total: 45, data: [0, 15, 30] },
    { name: 'beta', total: 2, data: [0, 0, 2] },
  ], 'no other series when every model fits');
  const empty = await get(`/admin/logs/stats/traffic-chart?since=${s('2025-03-01T00:00:00Z')}&until=${s('2025-03-01T03:00:00Z')}`);
  t.same(empty.json.x.length, 3);
  t.same(empty.json.series, []);
  const master = await get(`/admin/logs/stats/traffic-chart?since=${since}&until=${until}&master_id=2`);
  t.same(master.json.series, [{ name: 'beta', total: 1, data: [0, 0, 1] }]);
});

t.test('traffic chart by minute: the axis starts at the minute of since', async (t) => {
  const since = s('2025-03-10T10:58:30Z');
  const until = s('2025-03-10T11:01:00Z');
  const r = await get(`/admin/logs/stats/traffic-chart?granularity=minute&since=${since}&until=${until}`);
  t.equal(r.status, 200);
  t.same(r.json.x, [s('2025-03-10T10:58:00Z'), s('2025-03-10T10:59:00Z'), s('2025-03-10T11:00:00Z')]);
  t.same(r.json.series, [{ name: 'alpha', total: 2, data: [0, 1, 1] }]);
  const six = await get(`/admin/logs/stats/traffic-chart?granularity=minute&since=${since}&until=${since + 6 * 3600}`);
  t.equal(six.status, 200, 'exactly 6 hours is allowed');
  t.equal(six.json.x.length, 361, 'a range starting mid-minute touches 361 minutes');
});

t.test('without since/until the reads cover the last 24 hours (6 hours for minute buckets), as documented', async (t) => {
  // The test clock runs on from 12:00:30; `until` defaults to its now.
  const near = (until: number) => Math.abs(until - svc.service.clock.now() / 1000) <= 5;
  const plain = await get('/admin/logs/stats');
  t.equal(plain.status, 200);
  t.ok(near(plain.json.until), 'until is now');
  t.equal(plain.json.until - plain.json.since, 86400, 'the last 24 hours');
  t.ok(plain.json.items.length > 0, 'the last 24 hours hold records');
  const from = s('2025-03-10T11:00:00Z');
  const fromOnly = await get(`/admin/logs/stats?since=${from}`);
  t.equal(fromOnly.json.since, from);
  t.ok(near(fromOnly.json.until), 'until is now');
  const toOnly = await get(`/admin/logs/stats?until=${from}`);
  t.match(toOnly.json, { since: from - 86400, until: from });
  const minutes = await get('/admin/logs/stats/traffic-chart?granularity=minute');
  t.equal(minutes.status, 200);
  t.equal(minutes.json.until - minutes.json.since, 6 * 3600, 'minute buckets: the last 6 hours');
  const hours = await get('/admin/logs/stats/traffic-chart');
  t.equal(hours.json.until - hours.json.since, 86400);
  const doc = (await svc.request('GET', '/swagger/doc.json')).json;
  for (const path of ['/admin/logs/stats', '/admin/logs/stats/traffic-chart']) {
    t.match(doc.paths[path].get.description, /last 24 hours/, `${path} states its default window`);
    t.notOk(doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'since').required, `${path} since is optional`);
  }
  t.match(doc.paths['/admin/logs'].get.description, /SVC_LOG_FLUSH_MS/, 'the log list states the ingestion delay');
});

t.test('parameter errors answer 400 in the envelope', async (t) => {
  const since = s('2025-03-10T00:00:00Z');
  const cases: Array<[string, string]> = [
    [`/admin/logs/stats?since=${since}&until=${since - 1}`, 'until'],
    [`/admin/logs/stats?since=${since}&until=${since}`, 'until'],
    [`/admin/logs/stats?since=${since}&until=${since + 60}&group_by=week`, 'group_by'],
    [`/admin/logs/stats?since=abc&until=${since + 60}`, 'since'],
    [`/admin/logs/stats?since=-5&until=${since + 60}`, 'since'],
    [`/admin/logs/stats?since=${since}&until=${since + 6 * 3600 + 1}&group_by=minute`, 'until'],
    [`/admin/logs/stats?since=${since}&until=${since + 60}&master_id=0`, 'master_id'],
    [`/admin/logs/stats/traffic-chart?since=${since}&until=${since + 60}&top_n=0`, 'top_n'],
    [`/admin/logs/stats/traffic-chart?since=${since}&until=${since + 60}&top_n=21`, 'top_n'],
    [`/admin/logs/stats/traffic-chart?since=${since}&until=${since + 60}&granularity=day`, 'granularity'],
    [`/admin/logs/stats/traffic-chart?since=${since}&until=${since + 60}&metric=bytes`, 'metric'],
    [`/admin/logs/stats/traffic-chart?since=${since}&until=${since + 6 * 3600 + 60}&granularity=minute`, 'until'],
    [`/admin/logs/stats/traffic-chart?since=${since}&until=${since + 31 * 86400 + 1}`, 'until'],
    [`/admin/logs/stats/traffic-chart?since=${since + 60}&until=${since}`, 'until'],
  ];
  for (const [path, field] of cases) {
    const r = await get(path);
    t.equal(r.status, 400, path);
    t.equal(r.json.code, 'bad_request', path);
    t.ok(Object.keys(r.json.data).some((k) => k.endsWith(field)), `${path} names ${field}: ${JSON.stringify(r.json.data)}`);
    t.type(r.json.request_id, 'string');
  }
  const ok = await get(`/admin/logs/stats/traffic-chart?since=${since}&until=${since + 31 * 86400}&top_n=20`);
  t.equal(ok.status, 200, '31 days of hours and top_n 20 are allowed');
  t.equal(ok.json.x.length, 31 * 24);
  const anon = await svc.request('GET', `/admin/logs/stats?since=${since}&until=${since + 60}`);
  t.equal(anon.status, 401);
});
