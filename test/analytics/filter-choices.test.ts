import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';
import { countSlices, rangePieces, sliceTotal } from '../../src/storage/clickhouse/log-counts.js';

const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '50' } });
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const ch = svc.service.context.clickhouse;

const newMaster = async (name: string) => {
  const r = await svc.request('POST', '/admin/masters', { ...admin, body: { name, group: 'default' } });
  return { id: r.json.id as number, key: r.json.master_key as string };
};
const m1 = await newMaster('facets-one');
const m2 = await newMaster('facets-two');
const m3 = await newMaster('facets-three');
const masters = [m1.id, m1.id, m2.id, m1.id, m3.id];

const base = Date.parse('2026-04-01T00:00:00.000Z') / 1000;
/** 400 records over three days, each at an odd second: every rollup level and the raw edges get some. */
const records = Array.from({ length: 400 }, (_, i) => {
  const master = masters[i % masters.length]!;
  return {
    master_id: master,
    key_id: master * 10 + (i % 4),
    model: `model-${(i * i) % 6}`,
    group: `g${i % 3}`,
    status_code: i % 11 === 0 ? 503 : i % 17 === 0 ? 429 : i % 6 === 0 ? 404 : i % 13 === 0 ? 302 : 200,
    // Error messages under 400 and over it: errors only counts both, the rollups' errors only the second.
    error_message: i % 7 === 0 ? 'upstream reset' : '',
    createdAt: new Date((base + i * 650 + (i % 59)) * 1000).toISOString(),
  };
});
const posted = await svc.request('POST', '/logs', { body: records });
if (posted.status !== 202) throw new Error(`POST /logs: ${posted.status} ${posted.text}`);
await svc.service.system.ask('logs', 'flush');

type Pairs = Array<{ value: number | string; requests: number }>;
const byValue = (a: Pairs) => [...a].sort((x, y) => (String(x.value) < String(y.value) ? -1 : 1));
const column: Record<string, string> = { masters: 'master_id', keys: 'key_id', models: 'model', groups: '`group`', status_classes: "concat(toString(intDiv(status_code, 100)), 'xx')" };
const filterColumn: Record<string, string> = { master_id: 'master_id', key_id: 'key_id', model: 'model', group: '`group`', status_code: 'status_code' };
const own: Record<string, string> = { masters: 'master_id', keys: 'key_id', models: 'model', groups: 'group', status_classes: '' };

/** The same counts straight from the raw table: each dimension under the filters on the others. */
async function rawFacet(dim: string, since: number, until: number, filters: Record<string, string | number>, scopeMaster?: number): Promise<Pairs> {
  const where = [`created_at >= toDateTime64(${since}, 3, 'UTC')`, `created_at < toDateTime64(${until}, 3, 'UTC')`];
  if (scopeMaster !== undefined) where.push(`master_id = ${scopeMaster}`);
  for (const [k, v] of Object.entries(filters)) if (k !== own[dim]) where.push(`${filterColumn[k]} = ${typeof v === 'string' ? `'${v}'` : v}`);
  const rows = await ch.query<{ value: number | string; requests: number }>(
    `SELECT ${column[dim]} AS value, count() AS requests FROM logs WHERE ${where.join(' AND ')} GROUP BY value`,
  );
  return rows.map((r) => ({ value: r.value, requests: Number(r.requests) }));
}

const windows: Array<[string, number, number]> = [
  ['whole days', base, base + 2 * 86_400],
  ['odd seconds across days, hours and minutes', base + 3_617, base + 2 * 86_400 + 5 * 3600 + 7 * 60 + 13],
  ['inside one minute', base + 650 * 10 + 2, base + 650 * 10 + 50],
  ['hours and minutes only', base + 7_260 + 31, base + 9 * 3600 + 59],
];

t.test('counts equal the raw counts, per dimension, for windows of every shape and for filters', async (t) => {
  const filterSets: Array<Record<string, string | number>> = [{}, { master_id: m1.id }, { model: 'model-1' }, { group: 'g2', key_id: m1.id * 10 + 1 }];
  for (const [label, since, until] of windows) {
    for (const f of filterSets) {
      const qs = new URLSearchParams({ since: String(since), until: String(until), limit: '100', ...Object.fromEntries(Object.entries(f).map(([k, v]) => [k, String(v)])) });
      const r = await svc.request('GET', `/admin/logs/filters?${qs}`, admin);
      t.equal(r.status, 200, label);
      for (const dim of Object.keys(column)) {
        const raw = await rawFacet(dim, since, until, f);
        t.same(byValue(r.json[dim].values), byValue(raw), `${label} ${JSON.stringify(f)}: ${dim}`);
        t.equal(r.json[dim].truncated, false);
      }
      const list = await svc.request('GET', `/admin/logs?${qs.toString().replace('limit=100', 'limit=1')}`, admin);
      t.equal(r.json.total, list.json.total, `${label} ${JSON.stringify(f)}: total equals the logs list total`);
    }
  }
});

t.test('without since/until: every record; busiest first; limit keeps the busiest and says more existed', async (t) => {
  const all = await svc.request('GET', '/admin/logs/filters', admin);
  t.equal(all.json.total, records.length);
  t.equal(all.json.until, null);
  const counts = all.json.keys.values.map((v: { requests: number }) => v.requests);
  t.same(counts, [...counts].sort((a: number, b: number) => b - a), 'busiest first');
  const two = await svc.request('GET', '/admin/logs/filters?limit=2', admin);
  t.equal(two.json.keys.values.length, 2);
  t.equal(two.json.keys.truncated, true);
  t.same(two.json.keys.values, all.json.keys.values.slice(0, 2));
  t.equal(two.json.status_classes.values.length, 4, 'status classes are never cut');
  t.equal(two.json.status_classes.truncated, false);
  t.same(all.json.status_classes.values.map((v: { value: string }) => v.value).sort(), ['2xx', '3xx', '4xx', '5xx']);
  t.equal((await svc.request('GET', '/admin/logs/filters?limit=1000', admin)).json.limit, 100, 'at most 100 per dimension');
  const early = await svc.request('GET', '/admin/logs/filters?since=5&until=86405', admin);
  t.equal(early.status, 200, 'times near the epoch (raw pieces at both ends)');
  t.equal(early.json.total, 0);
});

t.test('a master sees its own values only, counted exactly', async (t) => {
  const [label, since, until] = windows[1]!;
  const r = await svc.request('GET', `/v1/logs/filters?since=${since}&until=${until}&limit=100`, { token: m2.key });
  const other = await svc.request('GET', `/v1/logs/filters?since=${since}&until=${until}&master_id=${m1.id}`, { token: m2.key });
  t.same(other.json.masters.values.map((v: { value: number }) => v.value), [m2.id], 'asking for another master changes nothing');
  t.equal(other.json.total, r.json.total);
  t.equal(r.status, 200, label);
  t.same(r.json.masters.values.map((v: { value: number }) => v.value), [m2.id]);
  for (const dim of Object.keys(column)) {
    t.same(byValue(r.json[dim].values), byValue(await rawFacet(dim, since, until, {}, m2.id)), dim);
  }
  t.ok(r.json.keys.values.every((v: { value: number }) => Math.floor(v.value / 10) === m2.id));
  const own = await svc.request('GET', `/v1/logs?since=${since}&until=${until}&limit=1`, { token: m2.key });
  t.equal(r.json.total, own.json.total);
  t.equal((await svc.request('GET', '/v1/logs/filters', admin)).status, 401);
  t.equal((await svc.request('GET', '/admin/logs/filters', { token: m2.key })).status, 401);
});

t.test('bad windows and values: 400 in the envelope', async (t) => {
  for (const q of ['since=100&until=100', 'since=-1', 'until=99999999999', 'limit=0', 'key_id=x']) {
    const r = await svc.request('GET', `/admin/logs/filters?${q}`, admin);
    t.equal(r.status, 400, q);
    t.equal(r.json.code, 'bad_request');
  }
});

t.test('a window is read from rollups; the raw table only for the ragged seconds at its ends', async (t) => {
  const end = base + 3 * 86_400 + 3 * 3600 + 4 * 60 + 5;
  const pieces = rangePieces(['status_code'], base + 17, end);
  t.same(pieces.map((p) => p.table).sort(), ['logs', 'logs', 'logs_hourly_filters'], 'no master: the rollup without one, never a master-sorted one');
  for (const p of pieces.filter((x) => x.raw)) t.ok(p.to! - p.from! < 3600, 'under an hour of raw logs at each end, one piece');
  t.same(rangePieces(['status_code', 'master_id'], base + 17, end).map((p) => p.table).sort(),
    ['logs', 'logs', 'logs_daily', 'logs_hourly', 'logs_hourly', 'logs_minute', 'logs_minute'], 'a master: the master-sorted rollups');
  for (const p of rangePieces(['status_code', 'master_id'], base + 17, end).filter((x) => x.raw)) t.ok(p.to! - p.from! < 60, 'under a minute of raw logs');
  t.same(rangePieces(['model'], base + 17, end).filter((p) => !p.raw).map((p) => `${p.table}@${p.grain}`).sort(),
    ['logs_model_grains@3600', 'logs_model_grains@3600', 'logs_model_grains@60', 'logs_model_grains@60', 'logs_model_grains@86400'], 'the model alone: every grain from the table by model');
  t.same(rangePieces(['key_id'], base, base + 86_400 * 2).map((p) => p.table), ['logs_daily_key'], 'the key alone: a row per key and day');
  t.notOk(rangePieces(['key_id', 'model'], base, base + 86_400 * 2).some((p) => p.table.startsWith('logs_daily')), 'no day rollup has a key and a model');
  t.same(
    rangePieces(['key_id', 'model'], base + 17, base + 2 * 3600 + 65).map((p) => p.table).sort(),
    ['logs', 'logs', 'logs_hourly_key'],
    'a key and a model: whole hours from the hourly key rollup, the minutes and seconds raw, one piece at each end',
  );
  t.same(rangePieces(['status_code'], base, base + 86_400), [{ table: 'logs_hourly_filters', column: 'hour', raw: false, from: base, to: base + 86_400 }]);
  t.same(rangePieces(['master_id'], base, base + 86_400), [{ table: 'logs_daily_key', column: 'day', raw: false, from: base, to: base + 86_400 }], 'the master facet reads every master: its rollup');
});

t.test('the list total (rollups + raw edges): records matching a filter in a window, equal to the raw count', async (t) => {
  const filters: Array<Record<string, string | number>> = [
    {}, { master_id: m1.id }, { master_id: m1.id, key_id: m1.id * 10 + 1 }, { key_id: m2.id * 10 + 2 }, { model: 'model-1', group: 'g2' },
    { master_id: m1.id, model: 'model-0' },
    // An exact status code, from the rollups too (they keep the code, not its class: 404 and 429 share 4xx).
    { status_code: 404 }, { status_code: 429, master_id: m1.id }, { key_id: m2.id * 10 + 2, status_code: 200 }, { model: 'model-1', status_code: 503 },
    { status_code: 418 },
  ];
  // Errors only, alone and with each filter: the rollups' errors plus the raw error messages under 400.
  filters.push(...filters.map((f) => ({ ...f, error_only: 1 })));
  for (const [label, since, until] of [...windows, ['open since', null, base + 86_400 + 3_617] as const, ['open until', base + 3_617, null] as const]) {
    for (const f of filters) {
      const where = [...(since === null ? [] : [`created_at >= toDateTime64(${since}, 3, 'UTC')`]), ...(until === null ? [] : [`created_at < toDateTime64(${until}, 3, 'UTC')`])];
      for (const [k, v] of Object.entries(f)) {
        where.push(k === 'error_only' ? "(status_code >= 400 OR error_message != '')" : `${filterColumn[k]} = ${typeof v === 'string' ? `'${v}'` : v}`);
      }
      const [raw] = await ch.query<{ n: number }>(`SELECT count() AS n FROM logs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`);
      const { error_only: errorOnly, ...eq } = f;
      const slices = await countSlices(ch, { ...eq, error_only: errorOnly === 1, ...(since === null ? {} : { since }), ...(until === null ? {} : { until }) });
      t.equal(sliceTotal(slices), Number(raw!.n), `${label}, ${JSON.stringify(f)}`);
      // Every slice's records lie in its span: a page window taken from them never misses one.
      for (const s of slices) t.ok(s.from < s.to && s.n > 0, `${label}, ${JSON.stringify(f)}: slice [${s.from}, ${s.to})`);
    }
  }
});

t.test('freshness: the newest stored record, overall and per tenant', async (t) => {
  const newest = async (where: string) =>
    Number((await ch.query<{ ms: number }>(`SELECT toUnixTimestamp64Milli(max(created_at)) AS ms FROM logs ${where}`))[0]!.ms);
  const all = await svc.request('GET', '/admin/logs/freshness', admin);
  t.equal(all.status, 200);
  t.equal(Date.parse(all.json.newest_record_at), await newest(''));
  t.equal(all.json.age_ms, Date.parse(all.json.checked_at) - Date.parse(all.json.newest_record_at));
  const own = await svc.request('GET', '/v1/logs/freshness', { token: m2.key });
  t.equal(Date.parse(own.json.newest_record_at), await newest(`WHERE master_id = ${m2.id}`));
  t.ok(Date.parse(own.json.newest_record_at) < Date.parse(all.json.newest_record_at), 'its own, not the newest of all');
  const none = await newMaster('facets-none');
  t.same((await svc.request('GET', '/v1/logs/freshness', { token: none.key })).json.newest_record_at, null);
  // A new record stored: both move to it.
  const at = new Date(Date.parse(all.json.newest_record_at) + 90_000).toISOString();
  await svc.request('POST', '/logs', { body: { master_id: none.id, key_id: 1, model: 'm', status_code: 200, createdAt: at } });
  await svc.service.system.ask('logs', 'flush');
  t.equal((await svc.request('GET', '/admin/logs/freshness', admin)).json.newest_record_at, at);
  t.equal((await svc.request('GET', '/v1/logs/freshness', { token: none.key })).json.newest_record_at, at);
  t.equal((await svc.request('GET', '/v1/logs/freshness', { token: m2.key })).json.newest_record_at, own.json.newest_record_at);
});
