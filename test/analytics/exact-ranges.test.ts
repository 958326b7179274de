/**
 * Every statistics reader is exact to the second at both ends of its range.
 * Records sit one second before `since`, at `since`, one second before `until`
 * and at `until` (explicit ranges are [since, until); named periods and
 * realtime windows run through their last second), in minutes also holding
 * other records, so a reader that resolved to whole minutes would count them.
 * Expectations come from a plain model of the records (count what lies in
 * the range by createdAt), for each reader, filter and bucket size. Every
 * record has a distinct cost (1 + tokens_in·10^-12) or is unpriced, so cost
 * sums, compared exactly, also tell which records counted. The records go into
 * ClickHouse directly, with their cost (POST /logs prices records only where
 * the registry has prices; docs/analytics.md, "Money").
 */
import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';
import { moneyNumber, moneyText } from '../../src/storage/clickhouse/decimal.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
const now = Date.parse('2025-03-10T12:00:40Z');
const nowS = now / 1000;
const s = (iso: string): number => Date.parse(iso) / 1000;
const get = (path: string, token = adminToken) => {
  svc.service.clock.set(now);
  return svc.request('GET', path, { token });
};

interface Rec {
  master_id: number;
  key_id: number;
  model: string;
  status_code: number;
  latency_ms: number;
  tokens_in: number;
  tokens_out: number;
  /** 10^-12 units. */
  cost: bigint;
  unpriced: number;
  createdAt: string;
}
const records: Rec[] = [];
let m1: { id: number; master_key: string };
let m2: { id: number; master_key: string };
let bit = 1;
/** A record at Unix second `at` (+ `ms`); tokens_in is a fresh power of two, so sums tell exactly which records counted. */
const add = (master: number, model: string, at: number, ms = 0) => {
  const unpriced = records.length % 5 === 4 ? 1 : 0;
  records.push({
    master_id: master, key_id: master * 10 + (records.length % 2), model, status_code: records.length % 3 ? 200 : 500,
    latency_ms: 10 * (records.length + 1), tokens_in: bit % 1_000_000_007, tokens_out: 1,
    cost: unpriced ? 0n : 10n ** 12n + BigInt(bit % 1_000_000_007), unpriced, createdAt: new Date(at * 1000 + ms).toISOString(),
  });
  bit = bit * 2 > 2 ** 30 ? 3 : bit * 2;
};

// Explicit ranges: short (minute and hour buckets) and long (days, months), neither minute-aligned at either end.
const short = { since: s('2025-03-10T09:30:40Z'), until: s('2025-03-10T11:45:20Z') };
const long = { since: s('2025-03-05T09:30:40Z'), until: s('2025-03-09T11:45:20Z') };
// Five whole minutes: read with the seconds, not from the minute rollups (stats.ts, EDGE_MINUTES).
const tight = { since: s('2025-03-10T08:12:40Z'), until: s('2025-03-10T08:18:20Z') };

type Filter = { master_id?: number; key_id?: number };
const inRange = (r: Rec, since: number, until: number, f: Filter = {}) => {
  const at = Date.parse(r.createdAt) / 1000;
  return at >= since && at < until && (f.master_id === undefined || r.master_id === f.master_id) && (f.key_id === undefined || r.key_id === f.key_id);
};
const model = (since: number, until: number, f: Filter = {}) => records.filter((r) => inRange(r, since, until, f));
const sum = (rs: Rec[]) => ({
  requests: rs.length,
  tokens_in: rs.reduce((a, r) => a + r.tokens_in, 0),
  cost: moneyNumber(rs.reduce((a, r) => a + r.cost, 0n)),
  unpriced: rs.reduce((a, r) => a + r.unpriced, 0),
});
/** The figures every answer is checked by. */
const picked = (x: { requests: number; tokens_in: number; cost: number; unpriced: number }) =>
  ({ requests: x.requests, tokens_in: x.tokens_in, cost: x.cost, unpriced: x.unpriced });
const bucketOf = (at: number, b: string): number => {
  if (b === 'minute') return Math.floor(at / 60) * 60;
  if (b === 'hour') return Math.floor(at / 3600) * 3600;
  if (b === 'day') return Math.floor(at / 86400) * 86400;
  const d = new Date(at * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
};
const groups = (rs: Rec[], by: string) => {
  const m = new Map<string, Rec[]>();
  for (const r of rs) {
    const k = by === 'model' ? r.model : String(bucketOf(Date.parse(r.createdAt) / 1000, by));
    m.set(k, [...(m.get(k) ?? []), r]);
  }
  return Object.fromEntries([...m].map(([k, g]) => [k, sum(g)] as const).sort());
};

t.before(async () => {
  const mk = async (name: string) => {
    const r = await svc.request('POST', '/admin/masters', { token: adminToken, body: { name, group: 'default', global_qps: 0 } });
    if (r.status !== 201) throw new Error(`create master: ${r.status} ${r.text}`);
    return r.json;
  };
  m1 = await mk('one');
  m2 = await mk('two');
  for (const [range, master] of [[short, m1.id], [long, m2.id], [tight, m1.id]] as const) {
    // The four edge records, plus 'early' crowding the minute (and hour) before since and 'late' the minute of until.
    add(master, 'early', range.since - 1);
    add(master, 'm', range.since);
    add(master, 'm', range.until - 1);
    add(master, 'late', range.until);
    add(master, 'early', range.since - 1, 999); // the last millisecond before since
    for (let i = 2; i <= 30; i += 4) add(master, 'early', range.since - i);
    for (let i = 1; i <= 30; i += 4) add(master, 'late', range.until + i);
    add(master, 'n', range.since + 3600); // inside, a lesser model
    add(master, 'm', range.since + 1);
  }
  // Periods at now 12:00:40 (through that second): today, yesterday up to 12:00:40, last 7 days and the 7 before.
  for (const at of [nowS, nowS + 1, s('2025-03-10T00:00:00Z') - 1, s('2025-03-10T00:00:00Z'), nowS - 86400, nowS - 86400 + 1,
    nowS - 7 * 86400 - 1, nowS - 7 * 86400, nowS - 14 * 86400 - 1, nowS - 14 * 86400, nowS - 30 * 86400 - 1, nowS - 30 * 86400]) {
    add(m1.id, 'p', at);
  }
  // Realtime windows: last minute from 11:59:00, last 5 minutes from 11:55:00, both through 12:00:40.
  for (const iso of ['2025-03-10T11:54:59Z', '2025-03-10T11:55:00Z', '2025-03-10T11:58:59Z', '2025-03-10T11:59:00Z', '2025-03-10T12:00:39Z']) {
    add(m2.id, 'rt', s(iso));
  }
  add(m2.id, 'rt', nowS, 999);
  add(m2.id, 'rt', nowS + 1); // a second in the future: not yet
  // Decimal text, not a float: the stored cost is exactly the record's.
  const rows = records.map(({ createdAt, cost, ...r }, i) => ({ ...r, id: i + 1, created_at: createdAt, cost: moneyText(cost) }));
  await svc.service.context.clickhouse.insert('logs', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
});

const filters = (): Array<[string, Filter]> => [['no filter', {}], ['master', { master_id: m1.id }], ['key', { master_id: m1.id, key_id: m1.id * 10 }]];
const qs = (f: Filter) => Object.entries(f).map(([k, v]) => `&${k}=${v}`).join('');

t.test('log stats: every group_by, every filter, both ends exact', async (t) => {
  for (const [label, range] of [['short', short], ['long', long], ['tight', tight]] as const) {
    for (const by of ['model', 'minute', 'hour', 'day', 'month']) {
      if (by === 'minute' && range === long) continue; // over 6 hours
      for (const [fl, f0] of filters()) {
        const f = range === long && f0.master_id ? { ...f0, master_id: m2.id, ...(f0.key_id ? { key_id: m2.id * 10 } : {}) } : f0;
        const r = await get(`/admin/logs/stats?group_by=${by}&since=${range.since}&until=${range.until}${qs(f)}`);
        t.equal(r.status, 200);
        const got = Object.fromEntries(
          (r.json.items as Array<{ key: string; start: number | null; requests: number; tokens_in: number; cost: number; unpriced: number }>)
            .map((i) => [by === 'model' ? i.key : String(i.start), picked(i)])
            .sort(),
        );
        const want = groups(model(range.since, range.until, f), by);
        t.ok(Object.keys(want).length > 0, 'the model has records in range');
        t.same(got, want, `${label} range, group_by ${by}, ${fl}`);
      }
    }
  }
});

t.test('traffic chart: both granularities and metrics; a model all before since takes no top-N slot', async (t) => {
  for (const granularity of ['minute', 'hour']) {
    for (const metric of ['requests', 'tokens', 'cost']) {
      for (const [fl, f] of filters()) {
        const r = await get(`/admin/logs/stats/traffic-chart?granularity=${granularity}&metric=${metric}&top_n=1&since=${short.since}&until=${short.until}${qs(f)}`);
        t.equal(r.status, 200);
        const rs = model(short.since, short.until, f);
        // Exact: counts, or cost in 10^-12 units; compared as the numbers sent.
        const exact = (x: Rec): bigint => (metric === 'tokens' ? BigInt(x.tokens_in + x.tokens_out) : metric === 'cost' ? x.cost : 1n);
        const out = (v: bigint) => (metric === 'cost' ? moneyNumber(v) : Number(v));
        const totals = new Map<string, bigint>();
        for (const x of rs) totals.set(x.model, (totals.get(x.model) ?? 0n) + exact(x));
        const ranked = [...totals].sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : a[0] < b[0] ? -1 : 1));
        const want = [...ranked.slice(0, 1), ...(ranked.length > 1 ? [['other', ranked.slice(1).reduce((a, x) => a + x[1], 0n)] as const] : [])]
          .map(([n, v]) => [n, out(v)]);
        const got = (r.json.series as Array<{ name: string; total: number }>).map((x) => [x.name, x.total]);
        t.same(got, want, `${granularity}/${metric}/${fl}: series and totals`);
        t.notOk(got.some(([n]) => n === 'early' || n === 'late'), "'early' and 'late' take no slot");
        t.equal(got[0]![0], 'm', "the range's busiest model has the slot");
        const step = granularity === 'minute' ? 60 : 3600;
        const first = r.json.series[0].data[0];
        const inFirst = rs.filter((x) => x.model === 'm' && bucketOf(Date.parse(x.createdAt) / 1000, granularity) === Math.floor(short.since / step) * step);
        t.equal(first, out(inFirst.reduce((a, x) => a + exact(x), 0n)), 'the first bucket holds only data from since on');
      }
    }
  }
});

const periodRange = (p: string): [number, number] => {
  const today = Math.floor(nowS / 86400) * 86400;
  const since = p === 'today' ? today : p === 'last7d' ? nowS - 7 * 86400 : nowS - 30 * 86400;
  return [since, nowS + 1]; // through the current second
};
const shift = { today: 86400, last7d: 7 * 86400, last30d: 30 * 86400 } as const;

t.test('dashboard summary and its previous period', async (t) => {
  for (const p of ['today', 'last7d', 'last30d'] as const) {
    const r = await get(`/admin/dashboard/summary?period=${p}&include_trends=true`);
    t.equal(r.status, 200);
    const [since, until] = periodRange(p);
    t.same([r.json.since, r.json.until], [since, nowS], `${p}: the range echoed`);
    t.same(picked(r.json), sum(model(since, until)), `${p}: current period`);
    // The previous period ends where the current starts at the latest (a shared second counts for the current one).
    const prev = sum(model(since - shift[p], Math.min(until - shift[p], since)));
    t.equal(r.json.trends.requests.previous, prev.requests, `${p}: previous period requests`);
    t.equal(r.json.trends.cost.previous, prev.cost, `${p}: previous period cost`);
    t.equal(r.json.trends.cost.value, r.json.cost, `${p}: the cost trend's value is the period's cost`);
    t.same(r.json.previous, { since: since - shift[p], until: nowS - shift[p] });
  }
});

t.test('/v1/stats for the caller only', async (t) => {
  for (const p of ['today', 'last7d', 'last30d'] as const) {
    const r = await get(`/v1/stats?period=${p}`, m1.master_key);
    t.equal(r.status, 200);
    const [since, until] = periodRange(p);
    const rs = model(since, until, { master_id: m1.id });
    t.same(picked(r.json.totals), sum(rs), p);
    t.same(
      Object.fromEntries((r.json.by_day as Array<{ start: number; requests: number; tokens_in: number; cost: number; unpriced: number }>).map((i) => [String(i.start), picked(i)]).sort()),
      groups(rs, 'day'),
      `${p} by day`,
    );
    t.same(
      Object.fromEntries((r.json.by_model as Array<{ key: string; requests: number; tokens_in: number; cost: number; unpriced: number }>).map((i) => [i.key, picked(i)]).sort()),
      groups(rs, 'model'),
      `${p} by model`,
    );
  }
});

t.test('realtime windows: system, master, tenant and the master view', async (t) => {
  const minute = Math.floor(nowS / 60) * 60;
  const check = (label: string, json: any, f: Filter) => {
    t.same(picked(json.last_minute), sum(model(minute - 60, nowS + 1, f)), `${label}: last minute`);
    t.same(picked(json.last_5_minutes), sum(model(minute - 300, nowS + 1, f)), `${label}: last 5 minutes`);
  };
  check('system', (await get('/admin/realtime')).json, {});
  check('master', (await get(`/admin/masters/${m2.id}/realtime`)).json, { master_id: m2.id });
  check('tenant', (await get('/v1/realtime', m2.master_key)).json, { master_id: m2.id });
  check('master view', (await get(`/admin/masters/${m2.id}`)).json.realtime, { master_id: m2.id });
  t.ok(model(minute - 300, nowS + 1, { master_id: m2.id }).length >= 4, 'the windows hold records');
  t.ok(model(minute - 300, nowS + 1, { master_id: m2.id }).some((r) => r.unpriced) && model(minute - 300, nowS + 1).some((r) => r.cost > 0n), 'priced and unpriced records in the windows');
});
