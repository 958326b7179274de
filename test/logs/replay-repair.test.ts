/**
 * The rollups' repair after a crash replay (src/storage/clickhouse/rollup-check.ts,
 * repairRollups): each rollup compared, over the buckets the replayed records
 * touched, with the table it is computed from, and the buckets that differ
 * rebuilt, whether a rollup lacks a block or holds one twice; buckets outside
 * the span are not read. The crash itself is in acknowledgement.test.ts.
 */
import t from 'tap';
import { startTestService } from '../helpers/harness.js';
import { checkSource, repairRollups, rollupMismatches, type ReplaySpan } from '../../src/storage/clickhouse/rollup-check.js';
import { bucketRanges } from '../../src/storage/clickhouse/range-cut.js';
import { grainOf, ROLLUPS, rollupName } from '../../src/storage/clickhouse/rollups.js';

t.test('bucketRanges: whole buckets covering every second, joined across the narrowest gaps beyond 64 ranges', async (t) => {
  t.same(bucketRanges([5, 59, 60, 200], 60), [[0, 120], [180, 240]]);
  t.same(bucketRanges([3_600, 3_601, 90_000], 86_400), [[0, 172_800]]);
  // 100 days, one second each: at most 64 ranges, every second inside one.
  const seconds = Array.from({ length: 100 }, (_, i) => i * 86_400 + (i % 5) * 3_600);
  const ranges = bucketRanges(seconds, 1);
  t.ok(ranges.length <= 64, `${ranges.length} ranges`);
  t.ok(seconds.every((s) => ranges.some(([a, b]) => a <= s && s < b)), 'every second covered');
  t.ok(ranges.every(([a, b], i) => a < b && (i === 0 || ranges[i - 1]![1] < a)), 'ordered and disjoint');
});

t.test('checkSource: a finer or same-grain table with every dimension, checked before the rollup', async (t) => {
  const order = ROLLUPS.map((r) => r.table);
  for (const r of ROLLUPS) {
    const s = checkSource(r);
    if (!s) continue;
    t.equal(grainOf(r) % grainOf(s), 0, `${rollupName(r)} from ${rollupName(s)}: grain divides`);
    t.ok(r.dims.every((d) => s.dims.some((x) => x.name === d.name)), `${rollupName(r)} from ${rollupName(s)}: dimensions kept`);
    t.not(s, r);
    t.ok(order.includes(s.table));
  }
  t.equal(checkSource(ROLLUPS.find((r) => r.table === 'logs_minute')!), null, 'logs_minute comes from raw logs');
});

t.test('repairRollups: missing and doubled buckets rebuilt over the span, nothing outside it', async (t) => {
  const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '50' } });
  t.teardown(() => svc.stop());
  const ch = svc.service.context.clickhouse;
  const now = Date.UTC(2026, 2, 15, 12, 0, 0);
  svc.service.clock.set(now);
  const rows = [];
  // 2 masters, 2 keys each, over 70 days: wider than the 64 ranges a check reads and than a batch's 50 days (each day is compared by itself, so the days set the time).
  for (let i = 0; i < 400; i++) {
    const master = 1 + (i % 2);
    rows.push({
      master_id: master,
      key_id: master * 10 + (i % 4 < 2 ? 0 : 1),
      model: `m${i % 3}`,
      status_code: i % 9 === 0 ? 500 : 200,
      latency_ms: 5 + (i % 50),
      tokens_in: i,
      createdAt: new Date(now - Math.floor((i * 70 * 86_400_000) / 400) - (i % 7) * 1000).toISOString(),
    });
  }
  t.equal((await svc.request('POST', '/logs', { body: rows })).status, 202);
  await svc.service.system.ask('logs', 'flush');
  t.same(await rollupMismatches(ch), [], 'the rollups agree to begin with');

  // Damage: a day gone from logs_hourly (as a skipped replay leaves it), a day counted twice in the minutes by model
  // and in logs_daily_key, the seconds by model of another day gone (the other grains of that table untouched).
  const day = (n: number) => new Date(now - n * 86_400_000).toISOString().slice(0, 10);
  await ch.command(`DELETE FROM logs_hourly WHERE toDate(hour) = '${day(10)}'`);
  await ch.command(`INSERT INTO logs_model_grains SETTINGS insert_deduplicate = 0 SELECT * FROM logs_model_grains WHERE grain = 60 AND toDate(t) = '${day(20)}'`);
  await ch.command(`INSERT INTO logs_daily_key SETTINGS insert_deduplicate = 0 SELECT * FROM logs_daily_key WHERE day = '${day(30)}'`);
  await ch.command(`DELETE FROM logs_model_grains WHERE grain = 1 AND toDate(t) = '${day(40)}'`);
  const damaged = (await rollupMismatches(ch)).map((m) => m.table).sort();
  t.same(damaged, ['logs_daily_key', 'logs_hourly', 'logs_model_grains@1', 'logs_model_grains@60'], 'the damage shows');
  for (const viaSources of [false, true]) {
    const whole = await rollupMismatches(ch, { viaSources });
    t.ok(whole.length > 0 && whole.every((m) => m.groups > 0));
    t.same(await rollupMismatches(ch, { viaSources, byDay: true }), whole, `a day at a time, the same groups differ (via sources: ${viaSources})`);
  }

  const spanOf = async (where: string): Promise<ReplaySpan> => {
    const [r] = await ch.query<{ s: number[]; m: number[]; k: number[] }>(
      `SELECT arraySort(groupUniqArray(toUnixTimestamp(created_at))) AS s, groupUniqArray(master_id) AS m, groupUniqArray(key_id) AS k FROM logs WHERE ${where}`,
    );
    return { seconds: r!.s.map(Number), masters: r!.m.map(Number), keys: r!.k.map(Number) };
  };
  // A span over day 10 alone mends logs_hourly and reads nothing of the other days.
  const first = await repairRollups(ch, await spanOf(`toDate(created_at) = '${day(10)}'`));
  t.same(first, ['logs_hourly'], 'only the rollup that differs over the span is rebuilt');
  t.same((await rollupMismatches(ch)).map((m) => m.table).sort(), ['logs_daily_key', 'logs_model_grains@1', 'logs_model_grains@60'], 'damage outside the span stays');
  // Every record's second: more than 64 ranges, joined; a coarser rollup rebuilt from a finer one that was mended first.
  const rebuilt = await repairRollups(ch, await spanOf('1'));
  t.same([...rebuilt].sort(), ['logs_daily_key', 'logs_model_grains@1', 'logs_model_grains@60']);
  t.same(await rollupMismatches(ch), [], 'every rollup agrees with logs group by group');
  t.same(await repairRollups(ch, await spanOf('1')), [], 'a second pass finds nothing');

  // A rollup's day that no log has is compared too (the days come from every table, not from logs alone).
  // (The subquery: in the outer SELECT, `t` in WHERE would name the moved hour.)
  await ch.command(`INSERT INTO logs_model_grains SETTINGS insert_deduplicate = 0 SELECT * REPLACE (t - INTERVAL 200 DAY AS t) FROM (SELECT * FROM logs_model_grains WHERE grain = 3600 AND toDate(t) = '${day(10)}')`);
  const stray = await rollupMismatches(ch, { byDay: true });
  t.same(stray.map((m) => m.table), ['logs_model_grains@3600'], 'a day present only in a rollup shows');
  t.same(stray, await rollupMismatches(ch), 'with as many groups as the whole-table comparison');
});
