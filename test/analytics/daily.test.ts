/**
 * Ranges read from the day rollups: a range crossing several UTC days with
 * ragged ends is cut into ragged minutes, whole hours and whole days, and the
 * answer equals the hand-computed one whatever filter picks the rollups; a
 * deletion (DELETE /admin/logs) in the middle of a day keeps the day rollups
 * in agreement with the raw logs.
 */
import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';
import { EDGE_MINUTES, MASTER_EDGE_MINUTES, TOTAL_EDGE_MINUTES, queryPeriodTotals, querySeries, rangeParts } from '../../src/storage/clickhouse/stats.js';
import { DAY, joinAdjacent, type RangePiece } from '../../src/storage/clickhouse/range-cut.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
svc.service.clock.set(Date.parse('2025-03-10T12:00:30Z'));

const s = (iso: string): number => Date.parse(iso) / 1000;
const get = (path: string) => svc.request('GET', path, { token: adminToken });

// Exact to the second: since 22:58:30 and until 01:01:10 (exclusive); the partial minutes at both ends come from raw logs.
const since = s('2025-03-06T22:58:30Z');
const until = s('2025-03-09T01:01:10Z');
const range = `since=${since}&until=${until}`;

const rec = (master_id: number, key_id: number, model: string, status_code: number, latency_ms: number, tokens: number, createdAt: string) =>
  ({ master_id, key_id, model, status_code, latency_ms, tokens_in: tokens, tokens_out: tokens, createdAt });
const records = [
  rec(1, 11, 'alpha', 200, 100, 1, '2025-03-06T22:58:29.999Z'), // just before since: out
  rec(1, 11, 'alpha', 200, 200, 2, '2025-03-06T22:58:30.000Z'), // at since: in (partial minute)
  rec(2, 22, 'beta', 500, 300, 4, '2025-03-06T23:59:59.999Z'), // whole hour before the first day
  rec(1, 12, 'alpha', 200, 400, 8, '2025-03-07T00:00:00.000Z'), // whole day
  rec(2, 22, 'beta', 200, 900, 256, '2025-03-08T06:00:00.000Z'), // whole day
  rec(2, 22, 'alpha', 429, 500, 16, '2025-03-08T23:59:59.999Z'), // whole day
  rec(1, 11, 'beta', 200, 600, 32, '2025-03-09T00:30:00.000Z'), // whole hour after the last day
  rec(1, 11, 'alpha', 200, 700, 64, '2025-03-09T01:01:09.999Z'), // just before until: in (partial minute)
  rec(1, 11, 'alpha', 200, 800, 128, '2025-03-09T01:01:10.000Z'), // at until: out
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
const one = (key: string, start: number | null, lat: number, tok: number, errors = 0) =>
  item(key, start, {
    requests: 1, errors, error_rate: errors, tokens_in: tok, tokens_out: tok, tokens: 2 * tok,
    avg_latency_ms: lat, p50_latency_ms: lat, p95_latency_ms: lat, p99_latency_ms: lat,
  });
const day = (d: string) => s(`${d}T00:00:00Z`);

t.test('the range is cut into minutes, hours and days, by filter', async (t) => {
  const tr = { since, until };
  // A piece of a table that holds every grain (020) is named with its grain: `logs_total_grains@3600`.
  const where = (p: RangePiece) => (p.grain === undefined ? p.table : `${p.table}@${p.grain}`);
  const parts = (f: object, b?: 'day' | 'hour', byModel = false) =>
    rangeParts(tr, f, b, byModel).map((p) => [where(p), new Date(p.from * 1000).toISOString(), new Date(p.to * 1000).toISOString()]);
  t.same(parts({}), [
    ['logs_total_grains@86400', '2025-03-07T00:00:00.000Z', '2025-03-09T00:00:00.000Z'],
    ['logs_total_grains@3600', '2025-03-06T23:00:00.000Z', '2025-03-07T00:00:00.000Z'],
    ['logs_total_grains@3600', '2025-03-09T00:00:00.000Z', '2025-03-09T01:00:00.000Z'],
    // Two whole minutes outside the hours: read with the seconds, not as minutes (EDGE_MINUTES).
    ['logs_total_grains@1', '2025-03-06T22:59:00.000Z', '2025-03-06T23:00:00.000Z'],
    ['logs_total_grains@1', '2025-03-09T01:00:00.000Z', '2025-03-09T01:01:00.000Z'],
    ['logs_total_grains@1', '2025-03-06T22:58:30.000Z', '2025-03-06T22:59:00.000Z'],
    ['logs_total_grains@1', '2025-03-09T01:01:00.000Z', '2025-03-09T01:01:10.000Z'],
  ]);
  // By model, more than EDGE_MINUTES whole minutes outside the hours: read as minutes.
  const wide = { since: since - (EDGE_MINUTES - 1) * 60, until };
  const tablesOf = (r: { since: number; until: number }, f: object, byModel = false) => rangeParts(r, f, undefined, byModel).map(where);
  t.same(tablesOf(wide, {}, true), ['logs_model_grains@86400', 'logs_model_grains@3600', 'logs_model_grains@3600', 'logs_model_grains@60', 'logs_model_grains@60', 'logs_model_grains@1', 'logs_model_grains@1'], `by model, ${EDGE_MINUTES + 1} whole minutes: minute rows`);
  t.same(tablesOf({ since: since - (EDGE_MINUTES - 2) * 60, until }, {}, true).filter((x) => x === 'logs_model_grains@60'), [], `by model, ${EDGE_MINUTES} whole minutes: the seconds`);
  // Totals (one seconds row a second at most): up to TOTAL_EDGE_MINUTES whole minutes with the seconds, so every minute outside whole hours.
  t.same(tablesOf(wide, {}), ['logs_total_grains@86400', 'logs_total_grains@3600', 'logs_total_grains@3600', 'logs_total_grains@1', 'logs_total_grains@1', 'logs_total_grains@1', 'logs_total_grains@1'], `totals, ${EDGE_MINUTES + 1} whole minutes: the seconds`);
  // A master's whole minutes come from raw logs up to MASTER_EDGE_MINUTES (every minute outside whole hours), its minute rollup beyond.
  const minutes = (n: number) => ({ since: s('2025-03-06T10:00:30Z'), until: s('2025-03-06T10:01:10Z') + n * 60 });
  t.same(rangeParts(minutes(118), { master_id: 1 }).map((p) => p.table), ['logs', 'logs', 'logs'], 'a master, 118 whole minutes and no whole hour: raw logs');
  t.same(rangeParts(minutes(MASTER_EDGE_MINUTES), { master_id: 1 }, 'minute').map((p) => p.table), ['logs', 'logs', 'logs'], `a master, ${MASTER_EDGE_MINUTES} whole minutes: raw logs`);
  t.same(rangeParts(minutes(MASTER_EDGE_MINUTES + 1), { master_id: 1 }, 'minute').map((p) => p.table), ['logs_minute', 'logs', 'logs'], `a master, ${MASTER_EDGE_MINUTES + 1} whole minutes: its minute rollup`);
  t.same(rangeParts(minutes(TOTAL_EDGE_MINUTES), {}, 'minute').map(where), ['logs_total_grains@1', 'logs_total_grains@1', 'logs_total_grains@1'], `totals, ${TOTAL_EDGE_MINUTES} whole minutes: the seconds`);
  t.same(rangeParts(minutes(TOTAL_EDGE_MINUTES + 1), {}, 'minute').map(where), ['logs_total_grains@60', 'logs_total_grains@1', 'logs_total_grains@1'], `totals, ${TOTAL_EDGE_MINUTES + 1} whole minutes: minute rows`);
  t.same(tablesOf(tr, { master_id: 1 }), ['logs_daily', 'logs_hourly', 'logs_hourly', 'logs', 'logs', 'logs', 'logs'], 'a master, two whole minutes: raw logs');
  t.same(parts({}, 'day', true)[0]![0], 'logs_model_grains@86400', 'by model: the grains table with models');
  t.same(parts({ model: 'a' }, 'day')[0]![0], 'logs_model_grains@86400', 'a model filter: the grains table with models');
  t.same(
    parts({ master_id: 1, key_id: 11 }).map((p) => p[0]),
    ['logs_hourly_key', 'logs', 'logs', 'logs', 'logs'],
    'a key: whole hours from logs_hourly_key (no day or minute rollup has key_id), the rest raw',
  );
  t.same(rangeParts(wide, {}, 'hour', true).map(where), ['logs_model_grains@3600', 'logs_model_grains@60', 'logs_model_grains@60', 'logs_model_grains@1', 'logs_model_grains@1'], 'hour buckets never read days');
  t.same(rangeParts({ since: day('2025-03-07'), until: day('2025-03-09') }, {}).length, 1, 'whole days: one part');
  t.same(rangeParts({ since: since, until: since + 20 }, {}).map(where), ['logs_total_grains@1'], 'within one minute: seconds only');
  t.same(rangeParts({ since: since, until: since + 20 }, { master_id: 1 }).map((p) => p.table), ['logs'], 'within one minute, one master: raw logs only');
  t.same(rangeParts({ since: s('2025-03-06T22:58:50Z'), until: s('2025-03-06T22:59:10Z') }, {}).map((p) => [p.from - since, p.to - since]), [[20, 40]], 'across a minute edge with no whole minute: one raw piece');
});

t.test('pieces of one table that meet are read as one range', async (t) => {
  const p = (table: string, from: number | null, to: number | null): RangePiece => ({ table, column: 't', raw: false, from, to });
  t.same(joinAdjacent([p('a', 10, 20), p('b', 20, 30), p('a', 30, 40), p('a', 20, 30)]), [p('a', 10, 40), p('b', 20, 30)], 'joined in the order first seen, also across a piece passed over');
  t.same(joinAdjacent([p('a', 40, null), p('a', null, 10)]), [p('a', 40, null), p('a', null, 10)], 'open bounds never meet');
  t.same(joinAdjacent([p('a', 10, 20), p('a', 21, 30)]), [p('a', 10, 20), p('a', 21, 30)], 'a second apart: two ranges');
  const minutes = { ...p('a', 10, 20), grain: 60 };
  const seconds = { ...p('a', 20, 30), grain: 1 };
  t.same(joinAdjacent([minutes, seconds]), [minutes, seconds], 'two grains of one table: two ranges');
  // The realtime read: the last minute and now's partial minute, and the four minutes before them, as two periods.
  const sqls: string[] = [];
  const capture = { query: async <T>(sql: string): Promise<T[]> => (sqls.push(sql), []) };
  const minute = s('2025-03-10T12:00:00Z');
  await queryPeriodTotals(capture, [{ since: minute - 60, until: minute + 31 }, { since: minute - 300, until: minute - 60 }]);
  t.equal(sqls[0]!.match(/grain = 1 AND t >= /g)?.length, 1, 'the seconds read as one range');
  t.match(sqls[0]!, /multiIf\(/, 'each row still counts for its own period');
});

t.test('a read of one grains table selects from it directly; a read of several tables from their UNION ALL', async (t) => {
  const sqls: string[] = [];
  const capture = { query: async <T>(sql: string): Promise<T[]> => (sqls.push(sql), []) };
  const since = s('2025-03-06T10:00:30Z');
  const until = s('2025-03-08T12:10:20Z');
  await queryPeriodTotals(capture, [{ since, until }, { since: since - DAY, until: since }]);
  await querySeries(capture, { range: { since, until }, bucket: 'hour', metric: 'requests' });
  await queryPeriodTotals(capture, [{ since, until }], { master_id: 1 });
  const [totals, series, master] = sqls as [string, string, string];
  t.match(totals, /\nFROM logs_total_grains WHERE /, 'unfiltered totals: FROM the table itself');
  t.match(totals, /multiIf\(t >= \d+, 0, t >= \d+, 1, 0\) AS p, sum\(requests\)/, 'the period of a row from its own time, beside the sums');
  t.match(series, /\nFROM logs_model_grains WHERE /, 'the traffic chart: FROM the table itself');
  t.notMatch(totals, /UNION ALL|FROM \(/, 'totals: no subquery');
  t.equal(series.match(/FROM \(/g)?.length, 1, "the chart: only the subquery of its buckets, which it folds into each model's arrays");
  t.match(master, /FROM \(\nSELECT day AS t, .* FROM logs_daily WHERE [^]*\nUNION ALL\n/, "a master's read: its tables' rows as one source");
});

t.test('group_by day and model over days with ragged ends (day rollups, no filter)', async (t) => {
  const byDay = await get(`/admin/logs/stats?group_by=day&${range}`);
  t.equal(byDay.status, 200);
  t.same(byDay.json.items, [
    item('2025-03-06', day('2025-03-06'), {
      requests: 2, errors: 1, error_rate: 0.5, tokens_in: 6, tokens_out: 6, tokens: 12,
      avg_latency_ms: 250, p50_latency_ms: 250, p95_latency_ms: 295, p99_latency_ms: 299,
    }),
    one('2025-03-07', day('2025-03-07'), 400, 8),
    item('2025-03-08', day('2025-03-08'), {
      requests: 2, errors: 1, error_rate: 0.5, tokens_in: 272, tokens_out: 272, tokens: 544,
      avg_latency_ms: 700, p50_latency_ms: 700, p95_latency_ms: 880, p99_latency_ms: 896,
    }),
    item('2025-03-09', day('2025-03-09'), {
      requests: 2, tokens_in: 96, tokens_out: 96, tokens: 192,
      avg_latency_ms: 650, p50_latency_ms: 650, p95_latency_ms: 695, p99_latency_ms: 699,
    }),
  ]);
  const byModel = await get(`/admin/logs/stats?${range}`);
  t.same(byModel.json.items, [
    item('alpha', null, {
      requests: 4, errors: 1, error_rate: 0.25, tokens_in: 90, tokens_out: 90, tokens: 180,
      avg_latency_ms: 450, p50_latency_ms: 450, p95_latency_ms: 670, p99_latency_ms: 694,
    }),
    item('beta', null, {
      requests: 3, errors: 1, error_rate: 0.3333, tokens_in: 292, tokens_out: 292, tokens: 584,
      avg_latency_ms: 600, p50_latency_ms: 600, p95_latency_ms: 870, p99_latency_ms: 894,
    }),
  ]);
});

t.test('a master filter reads logs_daily, a key filter the hourly rollup: same answers', async (t) => {
  const m1 = await get(`/admin/logs/stats?group_by=day&master_id=1&${range}`);
  t.same(m1.json.items, [
    one('2025-03-06', day('2025-03-06'), 200, 2),
    one('2025-03-07', day('2025-03-07'), 400, 8),
    item('2025-03-09', day('2025-03-09'), {
      requests: 2, tokens_in: 96, tokens_out: 96, tokens: 192,
      avg_latency_ms: 650, p50_latency_ms: 650, p95_latency_ms: 695, p99_latency_ms: 699,
    }),
  ]);
  const k22 = await get(`/admin/logs/stats?group_by=day&master_id=2&key_id=22&${range}`);
  const m2 = await get(`/admin/logs/stats?group_by=day&master_id=2&${range}`);
  t.same(k22.json.items, m2.json.items, 'master 2 has only key 22');
  t.same(m2.json.items.map((i: { key: string; requests: number; errors: number }) => [i.key, i.requests, i.errors]), [
    ['2025-03-06', 1, 1], ['2025-03-08', 2, 1],
  ]);
});

t.test('a deletion in the middle of a day: the day rollups follow the raw logs', async (t) => {
  const del = await svc.request('DELETE', `/admin/logs?before=${encodeURIComponent('2025-03-08T12:00:00Z')}&master_id=2`, { token: adminToken });
  t.equal(del.status, 200);
  t.same(del.json, { deleted: 2 }, 'the 03-06 and 03-08 06:00 logs of master 2');
  const byDay = await get(`/admin/logs/stats?group_by=day&${range}`);
  t.same(byDay.json.items, [
    one('2025-03-06', day('2025-03-06'), 200, 2),
    one('2025-03-07', day('2025-03-07'), 400, 8),
    one('2025-03-08', day('2025-03-08'), 500, 16, 1),
    item('2025-03-09', day('2025-03-09'), {
      requests: 2, tokens_in: 96, tokens_out: 96, tokens: 192,
      avg_latency_ms: 650, p50_latency_ms: 650, p95_latency_ms: 695, p99_latency_ms: 699,
    }),
  ]);
  const m2 = await get(`/admin/logs/stats?master_id=2&${range}`);
  t.same(m2.json.items, [one('alpha', null, 500, 16, 1)]);
  const byModel = await get(`/admin/logs/stats?${range}`);
  t.same(byModel.json.items.map((i: { key: string; requests: number; tokens_in: number }) => [i.key, i.requests, i.tokens_in]), [
    ['alpha', 4, 90], ['beta', 1, 32],
  ]);
});
