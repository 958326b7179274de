/**
 * Spend read from the rollups equals the raw sum exactly: for masters and
 * keys, over ranges whose edges fall inside hours and inside minutes (and on
 * them), a budget period start that is not on an hour, and all time. Records
 * crowd every edge (one millisecond before, at, one second after) and spread
 * over four days, each with a distinct cost, so a sum that took a wrong record
 * differs. The records go into ClickHouse directly, with their cost.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrateClickHouse } from '../../src/storage/clickhouse/migrate.js';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';
import { spendSince } from '../../src/storage/clickhouse/spend.js';
import { moneyText } from '../../src/storage/clickhouse/decimal.js';
import { picoText, toPico } from '../../src/contract/money.js';

const dataDir = mkdtempSync(join(tmpdir(), 'spend-rollups-'));
const ch = await openClickHouse({ dataDir });
t.teardown(async () => {
  await ch.close();
  rmSync(dataDir, { recursive: true, force: true });
});
await migrateClickHouse(ch, fileURLToPath(new URL('../../../sql/clickhouse', import.meta.url)));

const s = (iso: string): number => Date.parse(iso) / 1000;
/** Keys per master: 11 and 12 belong to master 1, 21 to master 2. */
const KEYS: Array<[number, number]> = [[1, 11], [1, 12], [2, 21]];
// Range edges: on a day, on an hour, on a minute, inside a minute (a budget period start that is not on an hour).
const EDGES = [s('2025-03-06T00:00:00Z'), s('2025-03-07T13:00:00Z'), s('2025-03-06T10:17:00Z'), s('2025-03-07T10:17:23Z'), s('2025-03-08T12:00:40Z')];
const rows: Array<Record<string, unknown>> = [];
let n = 0;
const add = (atMs: number) => {
  const [master_id, key_id] = KEYS[n % KEYS.length]!;
  n++;
  // A distinct cost per record: 1 + n·10^-12, or 0 for every seventh (unpriced).
  const cost = n % 7 === 0 ? 0n : 10n ** 12n + BigInt(n);
  rows.push({
    id: n, master_id, key_id, model: `m${n % 3}`, status_code: 200, latency_ms: 5, tokens_in: n, tokens_out: 1,
    cost: moneyText(cost), unpriced: n % 7 === 0 ? 1 : 0, created_at: new Date(atMs).toISOString(),
  });
};
for (const e of EDGES) {
  // Each key gets a record at every offset: the last millisecond before the edge, at it, a second after.
  for (const off of [-1, 0, 1000, -30_000, 45_000]) for (let k = 0; k < KEYS.length; k++) add(e * 1000 + off);
}
// Spread: every 7 minutes and 13 seconds over four days, so whole days, hours and minutes all hold records.
for (let at = s('2025-03-05T00:00:00Z') * 1000; at < s('2025-03-09T00:00:00Z') * 1000; at += 433_000) add(at);

t.before(async () => {
  await ch.insert('logs', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
});

/** The raw table's answer, the reference. */
async function rawSpend(column: 'master_id' | 'key_id', ids: number[], since: number | null, until: number): Promise<Map<number, string>> {
  const out = new Map<number, string>(ids.map((id) => [id, picoText(0)]));
  const got = await ch.query<{ sid: number; spent: string }>(
    `SELECT ${column} AS sid, toString(sum(cost)) AS spent FROM logs WHERE ${column} IN {ids:Array(UInt64)}
     AND created_at >= {since:DateTime64(3, 'UTC')} AND created_at < {until:DateTime64(3, 'UTC')} GROUP BY sid`,
    { ids, since: new Date((since ?? 0) * 1000), until: new Date(until * 1000) },
  );
  for (const r of got) out.set(Number(r.sid), picoText(toPico(r.spent)));
  return out;
}

const SCOPES: Array<['master_id' | 'key_id', number[]]> = [['master_id', [1, 2, 3]], ['key_id', [11, 12, 21, 99]]];

t.test('every pair of edges, masters and keys: the rollups answer equals the raw sum', async (t) => {
  const sinces: Array<number | null> = [null, ...EDGES, EDGES[3]! + 1];
  const untils = [...EDGES, EDGES[4]! + 1, s('2025-03-10T00:00:00Z')];
  let compared = 0;
  for (const [column, ids] of SCOPES) {
    for (const since of sinces) {
      for (const until of untils) {
        if (since !== null && until <= since) continue;
        const want = await rawSpend(column, ids, since, until);
        const got = await spendSince(ch, column, ids, since, until);
        t.same([...got], [...want], `${column} [${since === null ? 'all time' : new Date(since * 1000).toISOString()}, ${new Date(until * 1000).toISOString()})`);
        compared++;
      }
    }
  }
  t.ok(compared > 50, `${compared} ranges compared`);
});

t.test('a budget period starting inside a minute (not on an hour) counts from that second on', async (t) => {
  const since = EDGES[3]!; // 2025-03-07T10:17:23Z
  const until = EDGES[4]!;
  for (const [column, ids] of SCOPES) {
    const got = await spendSince(ch, column, ids, since, until);
    t.same([...got], [...(await rawSpend(column, ids, since, until))], column);
    // The record a millisecond before the start is not counted, the one at the start is.
    const one = await spendSince(ch, column, ids, since - 1, until);
    t.not([...one].join(), [...got].join(), `${column}: the second before the start holds records and is not counted`);
  }
});

t.test('whole buckets come from the rollups: a row only the hour rollups hold is counted', async (t) => {
  const since = EDGES[3]!;
  const until = EDGES[4]!;
  const before = await spendSince(ch, 'key_id', [11], since, until);
  const beforeMaster = await spendSince(ch, 'master_id', [1], since, until);
  // 2025-03-08T05:00 lies in a whole hour of the range but not in a whole day of it, so an hour rollup answers it.
  const hour = { hour: '2025-03-08 05:00:00', master_id: 1, model: 'm0', group: '', status_code: 200, requests: 1, errors: 0, tokens_in: 0,
    tokens_out: 0, cost: '5', unpriced: 0, latency_sum: 0 };
  await ch.insert('logs_hourly_key', JSON.stringify({ ...hour, key_id: 11 }) + '\n');
  await ch.insert('logs_hourly', JSON.stringify(hour) + '\n');
  const after = await spendSince(ch, 'key_id', [11], since, until);
  const afterMaster = await spendSince(ch, 'master_id', [1], since, until);
  t.equal(BigInt(toPico(after.get(11)!)) - BigInt(toPico(before.get(11)!)), 5n * 10n ** 12n, 'key: read from logs_hourly_key');
  t.equal(BigInt(toPico(afterMaster.get(1)!)) - BigInt(toPico(beforeMaster.get(1)!)), 5n * 10n ** 12n, 'master: read from logs_hourly');
});
