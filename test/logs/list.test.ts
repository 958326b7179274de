/**
 * The logs list: keyset paging (next_cursor) and exact totals. Records spread
 * over three days, several on one millisecond, with every filter the list has;
 * each expectation comes from a plain model of the records (filter, then sort
 * by createdAt and posting order, newest first). The totals are read from the
 * rollups with raw edges (src/storage/clickhouse/log-counts.ts), so ranges not
 * on whole minutes show that the edges are exact to the second.
 */
import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';
import { listLogs, type LogFilter } from '../../src/storage/clickhouse/logs.js';
import { countSlices } from '../../src/storage/clickhouse/log-counts.js';
import type { ClickHouseReader, QueryParams } from '../../src/storage/clickhouse/client.js';

const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '50' } });
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const flush = () => svc.service.system.ask('logs', 'flush');
const now = Date.parse('2025-06-12T15:20:30.000Z');
const get = (path: string, token = adminToken) => {
  svc.service.clock.set(now);
  return svc.request('GET', path, { token });
};

interface Rec {
  master_id: number;
  key_id: number;
  model: string;
  group: string;
  status_code: number;
  error_message: string;
  tokens_in: number;
  createdAt: string;
}
const records: Rec[] = [];
/** A record at `ms` (Unix ms); tokens_in is its index, which names it in every answer. */
const add = (ms: number, over: Partial<Rec> = {}) => {
  const i = records.length;
  records.push({
    master_id: 101 + (i % 2),
    key_id: 10 + (i % 3),
    model: ['m-a', 'm-b', 'm-c'][i % 3 === 0 ? 0 : i % 5 === 0 ? 2 : 1]!,
    group: i % 4 === 0 ? 'g1' : 'g2',
    status_code: i % 7 === 0 ? 500 : i % 11 === 0 ? 429 : 200,
    error_message: i % 13 === 0 ? 'upstream reset' : '',
    tokens_in: i,
    createdAt: new Date(ms).toISOString(),
    ...over,
  });
};

type Filter = Partial<Pick<Rec, 'master_id' | 'key_id' | 'model' | 'group' | 'status_code'>> & { error_only?: boolean; since?: number; until?: number };
const matches = (r: Rec, f: Filter): boolean => {
  const at = Date.parse(r.createdAt) / 1000;
  for (const k of ['master_id', 'key_id', 'model', 'group', 'status_code'] as const) if (f[k] !== undefined && r[k] !== f[k]) return false;
  if (f.error_only && !(r.status_code >= 400 || r.error_message !== '')) return false;
  if (f.since !== undefined && at < f.since) return false;
  if (f.until !== undefined && at >= f.until) return false;
  return true;
};
/** What the list must show, newest first: ids grow in posting order, so ties on createdAt go by index. */
const expected = (f: Filter): number[] =>
  records
    .filter((r) => matches(r, f))
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.tokens_in - a.tokens_in)
    .map((r) => r.tokens_in);
const qs = (f: Filter) => Object.entries(f).map(([k, v]) => `&${k}=${encodeURIComponent(String(v))}`).join('');

// Range edges not on minutes: records one second before, at, one second before the end and at the end.
const since = Date.parse('2025-06-10T09:30:40Z') / 1000;
const until = Date.parse('2025-06-11T22:45:20Z') / 1000;

t.before(async () => {
  const start = now - 3 * 86_400_000;
  for (let i = 0; i < 260; i++) add(start + Math.floor((i * 3 * 86_400_000) / 260) + (i % 9) * 137);
  for (let i = 0; i < 6; i++) add(now - 60_000); // six records on one millisecond: ordered by id
  for (const s of [since - 1, since, until - 1, until]) {
    add(s * 1000);
    add(s * 1000 + 999);
  }
  const r = await svc.request('POST', '/logs', { body: records });
  if (r.status !== 202) throw new Error(`ingest answered ${r.status} ${r.text}`);
  await flush();
});

const cases = (): Array<[string, Filter]> => [
  ['no filter', {}],
  ['master', { master_id: 101 }],
  ['key', { key_id: 11 }],
  ['model', { model: 'm-c' }],
  ['group', { group: 'g1' }],
  ['status', { status_code: 500 }],
  ['errors only', { error_only: true }],
  ['time range (edges inside minutes)', { since, until }],
  ['master, model and range', { master_id: 102, model: 'm-b', since, until }],
  ['key, group and errors only', { key_id: 10, group: 'g2', error_only: true }],
  ['status and range', { status_code: 200, since: since + 1, until }],
];

t.test('keyset paging: newest first, every record once, for every filter; totals exact on every page', async (t) => {
  for (const [label, f] of cases()) {
    const want = expected(f);
    t.ok(want.length > 0, `${label}: the data has matching records`);
    const seen: number[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const r = await get(`/admin/logs?limit=7${qs(f)}${cursor ? `&cursor=${cursor}` : ''}`);
      t.equal(r.status, 200, label);
      t.equal(r.json.total, want.length, `${label}: total on page ${page}`);
      seen.push(...(r.json.items as Array<{ tokens_in: number }>).map((i) => i.tokens_in));
      cursor = r.json.next_cursor;
      if (r.json.items.length < 7) t.equal(cursor, null, `${label}: a short page is the last`);
      if (!cursor) break;
    }
    t.same(seen, want, `${label}: pages joined are the records newest first, no duplicate, no gap`);
    // Offsets keep working, and agree.
    const byOffset = await get(`/admin/logs?limit=5&offset=3${qs(f)}`);
    t.same(byOffset.json.items.map((i: { tokens_in: number }) => i.tokens_in), want.slice(3, 8), `${label}: offset page`);
  }
});

t.test('a filter matching nothing, or fewer records than the page reaches: exact pages and totals', async (t) => {
  // The slices bound these reads to the oldest slice (or skip them): the answers must not change.
  for (const [label, f, limit, offset] of [
    ['absent model', { model: 'm-none' }, 50, 0],
    ['absent master', { master_id: 999 }, 50, 0],
    ['absent model in a range', { model: 'm-none', since, until }, 50, 0],
    ['rare model, one page holds all', { model: 'm-c' }, 200, 0],
    ['rare model, offset past some', { model: 'm-c', since, until }, 200, 3],
    ['offset past the end', { master_id: 101 }, 10, 10_000],
  ] as Array<[string, Filter, number, number]>) {
    const want = expected(f);
    const r = await get(`/admin/logs?limit=${limit}&offset=${offset}${qs(f)}`);
    t.equal(r.status, 200, label);
    t.equal(r.json.total, want.length, `${label}: total`);
    t.same(r.json.items.map((i: { tokens_in: number }) => i.tokens_in), want.slice(offset, offset + limit), `${label}: items`);
    t.equal(r.json.next_cursor, null, `${label}: no next page`);
  }
});

t.test('a cursor and an offset: the offset skips from the cursor on', async (t) => {
  const want = expected({});
  const first = await get('/admin/logs?limit=4');
  const r = await get(`/admin/logs?limit=4&offset=2&cursor=${first.json.next_cursor}`);
  t.same(r.json.items.map((i: { tokens_in: number }) => i.tokens_in), want.slice(6, 10));
});

t.test('records inserted while paging neither shift nor repeat the pages after the cursor', async (t) => {
  const f: Filter = { master_id: 101 };
  const want = expected(f);
  const first = await get(`/admin/logs?limit=10${qs(f)}`);
  t.same(first.json.items.map((i: { tokens_in: number }) => i.tokens_in), want.slice(0, 10));
  // Newer records of the same master arrive between two pages.
  const fresh: Rec[] = [];
  for (let i = 0; i < 5; i++) {
    add(now - 1000 + i, { master_id: 101 });
    fresh.push(records[records.length - 1]!);
  }
  t.equal((await svc.request('POST', '/logs', { body: fresh })).status, 202);
  await flush();
  const rest: number[] = [];
  let cursor: string | null = first.json.next_cursor;
  while (cursor) {
    const r = await get(`/admin/logs?limit=10${qs(f)}&cursor=${cursor}`);
    t.equal(r.json.total, want.length + 5, 'the total counts the new records');
    rest.push(...r.json.items.map((i: { tokens_in: number }) => i.tokens_in));
    cursor = r.json.next_cursor;
  }
  t.same(rest, want.slice(10), 'the following pages are exactly the records after the first page');
  const top = await get(`/admin/logs?limit=10${qs(f)}`);
  t.same(top.json.items.slice(0, 5).map((i: { tokens_in: number }) => i.tokens_in), fresh.map((r) => r.tokens_in).reverse(), 'a new first page shows them');
});

t.test('the tenant list pages its own records with the same cursor', async (t) => {
  const m = await svc.request('POST', '/admin/masters', { token: adminToken, body: { name: 'pager', group: 'default', global_qps: 0 } });
  t.equal(m.status, 201);
  const batch: Rec[] = [];
  for (let i = 0; i < 9; i++) {
    add(now - 5000 - i * 1000, { master_id: m.json.id });
    batch.push(records[records.length - 1]!);
  }
  t.equal((await svc.request('POST', '/logs', { body: batch })).status, 202);
  await flush();
  const seen: number[] = [];
  let cursor: string | null = null;
  do {
    const r = await get(`/v1/logs?limit=4${cursor ? `&cursor=${cursor}` : ''}`, m.json.master_key);
    t.equal(r.status, 200);
    t.equal(r.json.total, 9);
    seen.push(...r.json.items.map((i: { tokens_in: number }) => i.tokens_in));
    cursor = r.json.next_cursor;
  } while (cursor);
  t.same(seen, expected({ master_id: m.json.id }));
});

t.test('totals are exact at both ends of a range, to the second', async (t) => {
  for (const [a, b] of [
    [since, until],
    [since + 1, until - 1],
    [since - 1, until + 1],
    [since, since + 1],
    [until - 1, until],
    [since - 3600, until + 86_400],
  ] as const) {
    for (const f of [{}, { master_id: 101 }, { key_id: 12 }, { model: 'm-b' }, { group: 'g2' }]) {
      const r = await get(`/admin/logs?limit=1&since=${a}&until=${b}${qs(f)}`);
      t.equal(r.json.total, expected({ ...f, since: a, until: b }).length, `[${a}, ${b}) ${JSON.stringify(f)}`);
    }
  }
});

t.test('a cursor that is not one is a 400 in the error envelope', async (t) => {
  for (const c of ['abc', '12', '1-2-3', '-1-2', `1-${'9'.repeat(21)}`, `1-${2n ** 64n}`]) {
    const r = await get(`/admin/logs?cursor=${encodeURIComponent(c)}`);
    t.equal(r.status, 400, c);
    t.equal(r.json.code, 'bad_request', c);
  }
});

t.test('a page without a master or key takes its keys from the by_time projection (migration 016)', async (t) => {
  const ch = svc.service.context.clickhouse;
  for (const f of [{}, { model: 'm-c' }, { status_code: 500, since, until }] as LogFilter[]) {
    const sent: Array<[string, QueryParams | undefined]> = [];
    const reader: ClickHouseReader = { query: (sql, params) => (sent.push([sql, params]), ch.query(sql, params)) };
    await listLogs(reader, f, 5, 0);
    const [sql, params] = sent[sent.length - 1]!;
    const keys = /\(master_id, key_id, created_at, id\) IN \((SELECT .*)\) ORDER BY/s.exec(sql)?.[1];
    t.ok(keys, `${JSON.stringify(f)}: the page is read by its keys`);
    const plan = (await ch.query<Record<string, string>>(`EXPLAIN projections = 1 ${keys}`, params)).map((r) => Object.values(r)[0]).join('\n');
    t.match(plan, /ReadFromMergeTree \(by_time\)/, `${JSON.stringify(f)}: the keys are read from by_time`);
  }
});

t.test('a key without its master is counted through key_id_bloom, not the by_time projection', async (t) => {
  const ch = svc.service.context.clickhouse;
  const sent: Array<[string, QueryParams | undefined]> = [];
  const reader: ClickHouseReader = { query: (sql, params) => (sent.push([sql, params]), ch.query(sql, params)) };
  await countSlices(reader, { key_id: 11, since, until });
  const [sql, params] = sent[0]!;
  const plan = (await ch.query<Record<string, string>>(`EXPLAIN projections = 1 ${sql}`, params)).map((r) => Object.values(r)[0]).join('\n');
  t.notMatch(plan, /by_time/, 'the raw pieces read logs itself');
  t.match(plan, /ReadFromMergeTree \((\w+\.)?logs\)/, 'and do read it'); // the database is the test's own over HTTP
});

t.test('after a deletion by condition no page shows a deleted record, the projection included', async (t) => {
  const del = await svc.request('DELETE', `/admin/logs?before=${encodeURIComponent(new Date(now + 86_400_000).toISOString())}&master_id=101`, admin);
  t.equal(del.status, 200, del.text);
  const kept = records.filter((r) => r.master_id !== 101);
  t.ok(kept.length < records.length && kept.length > 0);
  records.splice(0, records.length, ...kept);
  for (const [label, f] of cases()) {
    const want = expected(f);
    const r = await get(`/admin/logs?limit=200${qs(f)}`);
    t.equal(r.json.total, want.length, `${label}: total`);
    t.same(r.json.items.map((i: { tokens_in: number }) => i.tokens_in), want.slice(0, 200), `${label}: items`);
  }
  const ch = svc.service.context.clickhouse;
  const count = async () => Number((await ch.query<{ n: number }>('SELECT count() AS n FROM logs WHERE model = {m:String}', { m: 'm-c' }))[0]!.n);
  t.equal(await count(), expected({ model: 'm-c' }).length, 'a count the projection could answer agrees too');
  const lacking = () =>
    // A part every row of which was deleted is left empty until removed: it has nothing to project.
    ch.query<{ n: number }>("SELECT count() AS n FROM system.parts WHERE database = currentDatabase() AND table = 'logs' AND active AND rows > 0 AND NOT hasAll(projections, ['by_time', 'by_master_time'])");
  t.ok(Number((await lacking())[0]!.n) > 0, 'the parts the deletion touched lost the projections');

  // The next retention pass writes the projection back (a part the deletion touched does not merge with new parts until then).
  svc.service.clock.set(now);
  const pass = await svc.service.system.ask<{ projections_restored: number }>('logs', 'retention');
  t.ok(pass.projections_restored > 0, `retention restored it in ${pass.projections_restored} partitions`);
  t.equal(Number((await lacking())[0]!.n), 0, 'every part has both projections again');
  t.equal(await count(), expected({ model: 'm-c' }).length, 'and the count read through it agrees');
  for (const [label, f] of cases()) {
    const r = await get(`/admin/logs?limit=200${qs(f)}`);
    t.same(r.json.items.map((i: { tokens_in: number }) => i.tokens_in), expected(f).slice(0, 200), `${label}: items after the merge`);
  }
});
