/**
 * The dashboards bench scenario at a tiny scale: both sizes in one run from
 * the seeded stores, every call timed cold and every answer equal to the raw
 * table's, read_rows at both sizes with their growth, and the figures named
 * as docs/performance.md says. (The timings mean nothing here: only that it
 * runs and reports what it measured.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { dashboards, dashboardSizes } from '../../src/bench/scenarios/dashboards.js';

// Two seeds, two services and the raw checks: past the suite's 300 s per file on a loaded machine.
t.setTimeout(900_000);

const CALLS = [
  'summary_today_trends', 'summary_last7d_trends', 'summary_last30d_trends', 'summary_all_trends',
  'traffic_hour_7d_requests', 'traffic_minute_6h_requests', 'traffic_hour_7d_tokens', 'traffic_minute_6h_tokens',
  'traffic_hour_7d_cost', 'traffic_minute_6h_cost', 'stats_day_30d', 'stats_month_1y', 'v1_stats_last30d', 'realtime', 'realtime_master',
];

t.test('sizes: both given, or one beside a tenth of it; bad counts named', async (t) => {
  t.same(dashboardSizes('200000000,20000000'), [20_000_000, 200_000_000]);
  t.same(dashboardSizes('5000'), [500, 5000]);
  t.same(dashboardSizes(undefined), [20_000_000, 200_000_000]);
  t.throws(() => dashboardSizes('20M'), /BENCH_DASHBOARD_ROWS/);
});

t.test('a tiny run: both sizes, every call cold and exact', { timeout: 900_000 }, async (t) => {
  const seeds = mkdtempSync(join(tmpdir(), 'dash-seeds-'));
  const saved = { rows: process.env.BENCH_DASHBOARD_ROWS, dir: process.env.BENCH_SEED_DIR };
  process.env.BENCH_DASHBOARD_ROWS = '2000,10000';
  process.env.BENCH_SEED_DIR = seeds;
  t.teardown(() => {
    for (const [k, v] of [['BENCH_DASHBOARD_ROWS', saved.rows], ['BENCH_SEED_DIR', saved.dir]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(seeds, { recursive: true, force: true });
  });
  const r = await dashboards({ seconds: 1 });
  t.equal(r.status, 'ok');
  t.equal(r.figures.rows, 10_000);
  t.equal(r.figures.small_rows, 2000);
  t.same(r.rounds?.map((x) => x.rows), [2000, 10_000], 'one round per size, rows beside the figures');
  for (const call of CALLS) {
    t.ok(Number(r.figures[`${call}_cold_p99_ms`]) > 0, `${call} timed at the larger size`);
    t.ok(Number(r.figures[`${call}_cold_p99_ms_small`]) > 0, `${call} timed at the smaller size`);
    // One master's last five minutes may hold no record at all at these sizes (10,000 rows over 30 days):
    // ClickHouse then reads nothing, and 0 is the measurement. Every other call reads rows at both sizes.
    const readsNothing = call === 'realtime_master';
    const [reads, growth] = [Number(r.figures[`${call}_read_rows`]), Number(r.figures[`${call}_read_rows_growth`])];
    t.ok(readsNothing ? Number.isInteger(reads) && reads >= 0 : reads > 0, `${call}: read_rows measured (${reads})`);
    t.ok(readsNothing ? Number.isFinite(growth) && growth >= 0 : growth > 0, `${call}: growth from the smaller size (${growth})`);
    for (const rows of ['2,000', '10,000']) {
      const exact = r.targets.find((x) => x.name === `${call} at ${rows}: every answer equals the raw table's`);
      t.equal(exact?.value, 0, `${call} at ${rows}: no answer differs from the raw table`);
      t.equal(r.targets.find((x) => x.name === `${call} at ${rows}: zero errors, request list not exhausted`)?.value, 0);
      t.ok(r.targets.some((x) => x.name === `${call} at ${rows}: cold p99 < 100 ms`));
    }
  }
});
