/**
 * The dashboards bench's two raw-table sources agree: every range, grouping
 * and master answered from the batched sums (hours, then minutes and seconds
 * at the edges) equals the direct GROUP BY over the same range. The ranges
 * start and end anywhere, on and off minute and hour boundaries, empty and
 * reversed; the records fall at any millisecond of a window crossing hours and
 * a day. A batched source asked for a range it was not built for refuses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { migrateClickHouse } from '../../src/storage/clickhouse/migrate.js';
import { batchedSource, directSource, type Grouping, type RawRequest } from '../../src/bench/scenarios/raw-figures.js';
import { seededRandom } from '../../src/bench/harness/cold-load.js';
import { openTestClickHouse } from '../helpers/harness.js';

// 2026-03-31 22:00:00 UTC: the window crosses hours, a day and a month.
const BASE = Date.UTC(2026, 2, 31, 22) / 1000;
const SPAN = 3 * 3600;

t.test('batched sums equal direct queries for any range, grouping and master', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'raw-figures-'));
  const ch = await openTestClickHouse(dir);
  t.teardown(async () => {
    await ch.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrateClickHouse(ch, 'sql/clickhouse');
  const h = (k: number) => `cityHash64(number, ${k})`;
  await ch.command(`INSERT INTO logs (id, key_id, master_id, \`group\`, model, status_code, latency_ms, tokens_in, tokens_out, cost, unpriced, created_at, updated_at)
    SELECT number + 1, 1, 1 + ${h(1)} % 3, 'g', concat('m', toString(${h(2)} % 4)), if(${h(3)} % 10 = 0, 500, 200), 10,
      ${h(4)} % 1000, ${h(5)} % 100, toDecimal128(${h(6)} % 100000, 12) / 1000000000, 0,
      fromUnixTimestamp64Milli(toInt64(${BASE * 1000} + ${h(7)} % ${SPAN * 1000})) AS ts, ts
    FROM numbers(20000)`);

  const rand = seededRandom(7);
  const at = (): number => {
    const t0 = BASE - 120 + Math.floor(rand() * (SPAN + 240));
    const r = rand();
    return r < 0.2 ? Math.floor(t0 / 3600) * 3600 : r < 0.4 ? Math.floor(t0 / 60) * 60 : t0;
  };
  const groupings: Grouping[] = [{}, { byModel: true }, { time: 'minute', byModel: true }, { time: 'minute' }, { time: 'hour', byModel: true }, { time: 'day' }, { time: 'month' }];
  const requests: RawRequest[] = Array.from({ length: 300 }, (_, i) => {
    const [a, b] = [at(), at()];
    const [since, until] = i % 25 === 0 ? [b, a] : i % 31 === 0 ? [a, a] : [Math.min(a, b), Math.max(a, b)];
    const master = rand() < 0.5 ? undefined : 1 + Math.floor(rand() * 3);
    return { since, until, group: groupings[i % groupings.length]!, ...(master === undefined ? {} : { master }) };
  });
  // The whole window too, and a range of one second holding records.
  requests.push({ since: BASE - 60, until: BASE + SPAN + 60, group: { time: 'hour', byModel: true } });
  const [oneSecond] = await ch.query<{ s: number }>('SELECT toUInt32(toUnixTimestamp(min(created_at))) AS s FROM logs');
  requests.push({ since: Number(oneSecond!.s), until: Number(oneSecond!.s) + 1, group: { byModel: true } });

  const batched = await batchedSource(ch, requests);
  const direct = directSource(ch);
  let nonEmpty = 0;
  for (const r of requests) {
    const [got, want] = [await batched.figures(r), await direct.figures(r)];
    if (want.size) nonEmpty++;
    const sorted = (m: Map<string, unknown>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));
    t.same(sorted(got), sorted(want), `${JSON.stringify(r)}`);
  }
  t.ok(nonEmpty > 250, `most ranges hold records (${nonEmpty})`);

  await t.rejects(batched.figures({ since: BASE, until: BASE + 10, group: {}, master: 99 }), /not built for/);
  await t.rejects(batched.figures({ since: BASE - 7200, until: BASE, group: {} }), /outside the window/);
  await t.rejects(batchedSource(ch, [{ since: BASE + 0.5, until: BASE + 10, group: {} }]), /whole seconds/);
});
