/**
 * A master's statistics finer than whole minutes (a realtime window, the
 * seconds at either end of a range, its few whole minutes outside whole hours)
 * come from raw `logs`. For a dense master they are read through the
 * `by_master_time` projection (migration 018, sorted by master and time), so a
 * window reads the granules it covers, not the master's whole day; and they
 * stay exact: equal to a plain count over the table, also after a deletion has
 * dropped the projection from the parts it touched.
 * Reads run on the real engine (chDB; over HTTP through the bridge in bridge mode).
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouse, ClickHouseReader, QueryParams } from '../../src/storage/clickhouse/client.js';
import { migrateClickHouse } from '../../src/storage/clickhouse/migrate.js';
import { deleteLogs } from '../../src/storage/clickhouse/logs.js';
import { deleteSliceSql } from '../../src/storage/clickhouse/rollups.js';
import { parseMoney } from '../../src/storage/clickhouse/decimal.js';
import { queryPeriodTotals, queryStats, type StatsRow, type TimeRange } from '../../src/storage/clickhouse/stats.js';
import { openTestClickHouse } from '../helpers/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'cp-master-edges-'));
const ch: ClickHouse = await openTestClickHouse(dir);
t.teardown(async () => {
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
});
await migrateClickHouse(ch, fileURLToPath(new URL('../../../sql/clickhouse', import.meta.url)));

const DAY0 = Date.parse('2025-03-10T00:00:00Z') / 1000;
const ROWS = 60_000;
// Master 1 is dense: 60,000 records over one day from 25 keys, one every 1.44 s (its day spans 8 granules of
// 8,192 rows, sorted by key first, so in the table a minute of it lies in every granule); master 2 sends a few.
await ch.command(`INSERT INTO logs (id, key_id, master_id, \`group\`, model, status_code, latency_ms, tokens_in, tokens_out, cost, unpriced, created_at, updated_at)
SELECT number + 1, 100 + number % 25, 1, 'default', concat('m-', toString(number % 3)), if(number % 7 = 0, 500, 200), 10 + number % 300,
  number % 1000, 1, toDecimal128(number % 13, 12) / 1000, number % 11 = 0,
  toDateTime64(${DAY0}, 3, 'UTC') + toIntervalMillisecond(number * 1440), now64(3)
FROM numbers(${ROWS})`);
await ch.command(`INSERT INTO logs (id, key_id, master_id, \`group\`, model, status_code, latency_ms, tokens_in, tokens_out, cost, unpriced, created_at, updated_at)
SELECT ${ROWS} + number + 1, 200, 2, 'default', 'm-0', 200, 20, 5, 1, 0, 0, toDateTime64(${DAY0}, 3, 'UTC') + toIntervalSecond(number * 900), now64(3)
FROM numbers(96)`);

/** The statements a read sends, run as it sends them. */
function recording(): ClickHouseReader & { sent: Array<[string, QueryParams | undefined]> } {
  const sent: Array<[string, QueryParams | undefined]> = [];
  return { sent, query: (sql, params) => (sent.push([sql, params]), ch.query(sql, params)) };
}

/** The read's plan, with the projections it reads (`ReadFromMergeTree (<projection>)`). */
async function plan(sql: string, params?: QueryParams): Promise<string> {
  return (await ch.query<Record<string, string>>(`EXPLAIN projections = 1 ${sql}`, params)).map((r) => Object.values(r)[0]).join('\n');
}

/** What a plain scan of the table counts in [since, until) for a master, projections off. */
async function plain(master: number, r: TimeRange, model?: string) {
  const [row] = await ch.query<{ n: number; err: number; tin: number; cost: string; unp: number; lat: number }>(
    `SELECT count() AS n, countIf(status_code >= 400) AS err, sum(tokens_in) AS tin, toString(sum(cost)) AS cost, sum(unpriced) AS unp, sum(latency_ms) AS lat
     FROM logs WHERE master_id = {m:UInt64} AND created_at >= {s:DateTime64(3, 'UTC')} AND created_at < {u:DateTime64(3, 'UTC')}${model ? ' AND model = {model:String}' : ''}
     SETTINGS optimize_use_projections = 0`,
    { m: master, s: new Date(r.since * 1000), u: new Date(r.until * 1000), ...(model ? { model } : {}) },
  );
  return { requests: Number(row!.n), errors: Number(row!.err), tokens_in: Number(row!.tin), cost: parseMoney(row!.cost), unpriced: Number(row!.unp), latency_sum: Number(row!.lat) };
}

const figures = (r: StatsRow) => ({
  requests: r.requests, errors: r.errors, tokens_in: r.tokens_in, cost: r.cost, unpriced: r.unpriced, latency_sum: r.latency_sum,
});

// A realtime window (the minute before `now` and the four before it) and a ragged range over hours.
const now = DAY0 + 13 * 3600 + 37 * 60 + 23;
const minute = Math.floor(now / 60) * 60;
const windows: TimeRange[] = [{ since: minute - 60, until: now + 1 }, { since: minute - 300, until: minute - 60 }];
const ragged: TimeRange = { since: DAY0 + 2 * 3600 + 17, until: DAY0 + 9 * 3600 + 125 };

t.test("a dense master's realtime window reads by_master_time, and counts what the table holds", async (t) => {
  const reader = recording();
  const rows = await queryPeriodTotals(reader, windows, { master_id: 1 });
  t.equal(reader.sent.length, 1, 'one read');
  const [sql, params] = reader.sent[0]!;
  t.match(sql, /FROM logs WHERE/, 'the window is read from raw logs');
  t.match(await plan(sql, params), /ReadFromMergeTree \(by_master_time\)/, 'through the projection');
  for (const [i, w] of windows.entries()) {
    const want = await plain(1, w);
    t.ok(want.requests > 10, `window ${i} holds records`);
    t.same(figures(rows[i]!), want, `window ${i}: the same figures as the table`);
  }
});

t.test("a dense master's ragged range by model: the raw edges through the projection, every model exact", async (t) => {
  const reader = recording();
  const rows = await queryStats(reader, { range: ragged, filter: { master_id: 1 }, byModel: true });
  const [sql, params] = reader.sent[0]!;
  t.match(await plan(sql, params), /ReadFromMergeTree \(by_master_time\)/, 'the edges read the projection');
  t.equal(rows.length, 3);
  for (const r of rows) t.same(figures(r), await plain(1, ragged, r.model!), `${r.model}`);
});

t.test('a sparse master is read as before, from the table (the projection would read no fewer granules)', async (t) => {
  const reader = recording();
  const rows = await queryPeriodTotals(reader, [ragged], { master_id: 2 });
  t.same(figures(rows[0]!), await plain(2, ragged));
});

t.test('after a deletion the parts it touched lose the projection and the figures stay exact', async (t) => {
  const slice = { before: new Date((DAY0 + 86_400) * 1000), master_id: 1, key_id: 103 };
  const heard: string[] = [];
  const deleted = await deleteLogs(ch, slice, (sql, ms) => heard.push(`${sql.split('\n')[0]} ${ms >= 0}`));
  t.ok(deleted > 1000, `${deleted} records deleted`);
  t.same(heard, deleteSliceSql(slice).map((s) => `${s.sql.split('\n')[0]} true`), 'each statement reported with its time, in order');
  const rows = await queryPeriodTotals(ch, windows, { master_id: 1 });
  for (const [i, w] of windows.entries()) t.same(figures(rows[i]!), await plain(1, w), `window ${i}`);
  const byModel = await queryStats(ch, { range: ragged, filter: { master_id: 1 }, byModel: true });
  t.equal(byModel.length, 3);
  for (const r of byModel) t.same(figures(r), await plain(1, ragged, r.model!), `ragged range, ${r.model}`);
});
