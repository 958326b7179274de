/**
 * dashboards: the analytics endpoints over a large log history, served from
 * the rollups, beside the same answers computed from the raw `logs` table.
 *
 * 1. Seeds BENCH_DASHBOARD_ROWS (default 20,000,000) rows spread evenly over the
 *    30 days before now straight into chDB (one INSERT ... SELECT FROM numbers()
 *    with deterministic pseudo-random columns: 200 masters, 5,000 keys (25 per
 *    master), 40 models with a skewed popularity, 4 groups, ~3% 429 and ~1% 500);
 *    the materialized views fill the rollups; OPTIMIZE FINAL stands for the
 *    background merges 30 days of history would have had.
 * 2. Starts the built service on that data directory, creates 200 masters
 *    (ids 1-200, as in the logs), and drives each endpoint with autocannon
 *    (10 connections, 10 s, after a 2 s warm-up) twice: with no other traffic
 *    (the statistics cache answers all but the first read), then while a data
 *    plane posts 2,000 records a second across every master (each insert, once
 *    a second, makes the cached answers of the endpoint's scope stale, so
 *    reads go to ClickHouse again). The targets apply to the second run.
 * 3. Restarts the service with the statistics cache off and drives each
 *    endpoint again: every answer computed from the rollups.
 * 0. Before the service starts, at this size and at BENCH_DASHBOARD_SMALL_ROWS
 *    (default a tenth of it, seeded in a directory of its own), measures the
 *    rows each call's statistics reads take from storage (dashboard-reads.ts):
 *    the target is at most 1.5x from the small size to this one, the test that
 *    a call's cost does not grow with the log count.
 * 4. Stops the service, reopens chDB in this process and runs the raw-table
 *    query that computes the same answer (same ranges, exact to the second as
 *    the service does) back to back for the same time, checking that the
 *    request counts agree. Ratio = service answers/s / raw answers/s.
 */
import { rmSync } from 'node:fs';
import autocannon from 'autocannon';
import { bearer, call } from '../harness/http.js';
import { benchDataDir, repoPath } from '../harness/paths.js';
import { okResult, target, type ScenarioResult, type Target } from '../harness/results.js';
import { benchAdminToken, startService } from '../harness/service.js';
import { fmt, printTable } from '../harness/table.js';
import { openClickHouse } from '../../storage/clickhouse/open.js';
import { migrateClickHouse } from '../../storage/clickhouse/migrate.js';
import { ROLLUPS } from '../../storage/clickhouse/rollups.js';
import type { ClickHouse } from '../../storage/clickhouse/client.js';
import { measureReads } from './dashboard-reads.js';
import { execFileSync } from 'node:child_process';

/** Disk a directory takes, MiB (du). */
const diskMiB = (dir: string): number => Number(execFileSync('du', ['-sm', dir], { encoding: 'utf8' }).split(/\s/)[0]);

/** Seeds `rows` into `dir` and measures each call's rows read there. */
async function seededReads(dir: string, rows: number, endSec: number): Promise<{ reads: Record<string, number>; seed: { insertS: number; optimizeS: number } }> {
  const seeded = await seed(dir, rows, endSec);
  process.stdout.write(`seeded ${fmt(rows)} rows in ${seeded.insertS.toFixed(1)} s, rollups merged in ${seeded.optimizeS.toFixed(1)} s, ${fmt(diskMiB(dir))} MiB on disk\n`);
  const ch = await openClickHouse({ dataDir: dir });
  try {
    return { reads: await measureReads(ch, endSec, 1), seed: seeded };
  } finally {
    await ch.close();
  }
}

const name = 'dashboards';
const connections = 10;
const DAY = 86_400;

/** Deterministic rows: column k of row n is a function of cityHash64(n, k). */
export function seedSql(rows: number, endSec: number): string {
  const h = (k: number) => `cityHash64(number, ${k})`;
  const span = 30 * DAY;
  return `INSERT INTO logs (id, key_id, master_id, \`group\`, model, status_code, latency_ms, tokens_in, tokens_out, cost, unpriced, created_at, updated_at)
SELECT number + 1, m * 25 + ${h(2)} % 25, m, concat('g', toString(m % 4)),
  concat('model-', toString(toUInt32(floor(40 * pow((${h(3)} % 1000000) / 1000000, 2))))),
  multiIf(${h(4)} % 100 < 3, 429, ${h(4)} % 100 < 4, 500, 200),
  toUInt32(50 + (${h(5)} % 1000) * (${h(5)} % 1000) / 500),
  toUInt32(${h(6)} % 2000), toUInt32(${h(7)} % 800),
  -- 3 per million tokens in, 15 per million out; 1 record in 200 unpriced (cost 0).
  if(${h(8)} % 200 = 0, toDecimal128(0, 12), toDecimal128(${h(6)} % 2000 * 3 + ${h(7)} % 800 * 15, 12) / 1000000),
  ${h(8)} % 200 = 0,
  fromUnixTimestamp64Milli(toInt64(${(endSec - span) * 1000} + intDiv(number * ${span * 1000}, ${rows}))) AS ts, ts
FROM (SELECT number, 1 + ${h(1)} % 200 AS m FROM numbers(${rows}))`;
}

export async function seed(dataDir: string, rows: number, endSec: number): Promise<{ insertS: number; optimizeS: number }> {
  const ch = await openClickHouse({ dataDir });
  try {
    await migrateClickHouse(ch, repoPath('sql/clickhouse'));
    let t = performance.now();
    await ch.command(seedSql(rows, endSec));
    const insertS = (performance.now() - t) / 1000;
    t = performance.now();
    for (const { table } of ROLLUPS) await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
    return { insertS, optimizeS: (performance.now() - t) / 1000 };
  } finally {
    await ch.close();
  }
}

interface GetRun {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** GET `path` with `connections` connections for `seconds`; latency of every response. */
async function getLoad(base: string, path: string, headers: Record<string, string>, seconds: number): Promise<GetRun> {
  const latencies: number[] = [];
  let ok = 0;
  let non2xx = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  const instance = autocannon({ url: base, connections, duration: seconds, timeout: 30, requests: [{ method: 'GET', path, headers }] });
  instance.on('response', (_c: unknown, status: number, _b: number, ms: number) => {
    latencies.push(ms);
    if (status >= 200 && status < 300) {
      if (performance.now() <= end + 50) ok++;
    } else non2xx++;
  });
  const result = await instance;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? 0;
  return { rps: ok / seconds, p50: pct(50), p99: pct(99), non2xx, errors: result.errors };
}

/** Runs `query` back to back for `seconds` (at least 3 times): answers/s and p99 latency. */
async function rawLoad(query: () => Promise<unknown>, seconds: number): Promise<{ rps: number; p99: number; runs: number }> {
  const times: number[] = [];
  const started = performance.now();
  while (times.length < 3 || performance.now() - started < seconds * 1000) {
    const t = performance.now();
    await query();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const total = times.reduce((a, b) => a + b, 0) / 1000;
  return { rps: times.length / total, p99: times[Math.min(times.length - 1, Math.ceil(0.99 * times.length) - 1)]!, runs: times.length };
}

/**
 * A data plane beside the dashboards: NDJSON batches of 200 records every 100 ms
 * (2,000 a second) spread over the 200 masters and 40 models, stamped now.
 * stop() ends it and returns the records accepted.
 */
export function ingestLoop(base: string): { stop: () => Promise<number> } {
  let accepted = 0;
  let n = 0;
  let running = true;
  const line = () => {
    const m = 1 + (n++ % 200);
    return JSON.stringify({ master_id: m, key_id: m * 25 + (n % 25), model: `model-${n % 40}`, group: `g${m % 4}`, status_code: n % 50 ? 200 : 500, latency_ms: 50 + (n % 900), tokens_in: n % 2000, tokens_out: n % 800 });
  };
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const body = Array.from({ length: 200 }, line).join('\n');
      const res = await fetch(`${base}/logs`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
      if (res.status !== 202) throw new Error(`POST /logs answered ${res.status}: ${await res.text()}`);
      accepted += 200;
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (performance.now() - started))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return accepted;
    },
  };
}

/** Statistics reads this service sent to ClickHouse so far (the cache's misses, from /metrics). */
async function cacheMisses(base: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: bearer(benchAdminToken) });
  const m = /^stats_cache_reads_total\{result="miss"\} (\d+)/m.exec(await res.text());
  if (!m) throw new Error('/metrics has no stats_cache_reads_total');
  return Number(m[1]);
}

interface Case {
  label: string;
  path: string;
  token: string;
  /** Request count in the service's answer, for the agreement check. */
  served: (json: any) => number;
  /** The raw-table query giving the same answer for the range the service reported; returns its request count. */
  raw: (ch: ClickHouse, json: any) => Promise<number>;
}

/** [since, until) to the second, as the service reads an explicit range. */
const between = (since: number, until: number) =>
  `created_at >= toDateTime64(${since}, 3, 'UTC') AND created_at < toDateTime64(${until}, 3, 'UTC')`;
/** A named period runs through its `until` second (docs/analytics.md). */
const through = (since: number, until: number) => between(since, until + 1);
const totalsSql = (since: number, until: number) =>
  `SELECT count() AS n, countIf(status_code >= 400) AS e, sum(tokens_in) AS ti, sum(tokens_out) AS tout, sum(latency_ms) AS ls FROM logs WHERE ${between(since, until)}`;
const fullSql = (key: string, where: string) =>
  `SELECT ${key} AS k, count() AS n, countIf(status_code >= 400) AS e, sum(tokens_in) AS ti, sum(tokens_out) AS tout, sum(latency_ms) AS ls, ` +
  `quantiles(0.5, 0.95, 0.99)(latency_ms) AS q FROM logs WHERE ${where} GROUP BY k ORDER BY k`;
const sumN = (rows: Array<{ n: number }>) => rows.reduce((a, r) => a + Number(r.n), 0);

function cases(masterKey: string, masterId: number, nowSec: number): Case[] {
  const chartUntil = nowSec;
  const chartSince = nowSec - 7 * DAY;
  return [
    {
      label: 'dashboard summary last30d + trends',
      path: '/admin/dashboard/summary?period=last30d&include_trends=true',
      token: benchAdminToken,
      served: (j) => j.requests,
      raw: async (ch, j) => {
        const [cur] = await Promise.all([
          ch.query<{ n: number }>(totalsSql(j.since, j.until + 1)),
          ch.query(totalsSql(j.previous.since, j.previous.until + 1)),
        ]);
        return Number(cur[0]!.n);
      },
    },
    {
      label: 'traffic chart hour 7d top_n 10',
      path: `/admin/logs/stats/traffic-chart?granularity=hour&since=${chartSince}&until=${chartUntil}&top_n=10`,
      token: benchAdminToken,
      served: (j) => j.series.reduce((a: number, s: { total: number }) => a + s.total, 0),
      raw: async (ch, j) =>
        sumN(await ch.query<{ n: number }>(`SELECT toStartOfHour(created_at) AS t, model AS m, count() AS n FROM logs WHERE ${between(j.since, j.until)} GROUP BY t, m`)),
    },
    {
      label: 'stats group_by day 30d',
      path: `/admin/logs/stats?group_by=day&since=${nowSec - 30 * DAY}&until=${nowSec}`,
      token: benchAdminToken,
      served: (j) => j.items.reduce((a: number, i: { requests: number }) => a + i.requests, 0),
      raw: async (ch, j) => sumN(await ch.query<{ n: number }>(fullSql('toStartOfDay(created_at)', between(j.since, j.until)))),
    },
    {
      label: '/v1/stats last30d (one master)',
      path: '/v1/stats?period=last30d',
      token: masterKey,
      served: (j) => j.totals.requests,
      raw: async (ch, j) => {
        const where = `master_id = ${masterId} AND ${through(j.since, j.until)}`;
        const [byModel] = await Promise.all([
          ch.query<{ n: number }>(fullSql('model', where)),
          ch.query(fullSql('toStartOfDay(created_at)', where)),
        ]);
        return sumN(byModel);
      },
    },
  ];
}

export async function dashboards(opts: { seconds?: number; nodeArgs?: string[] } = {}): Promise<ScenarioResult> {
  const seconds = opts.seconds ?? 10;
  const rows = Number(process.env.BENCH_DASHBOARD_ROWS ?? 20_000_000);
  const smallRows = Number(process.env.BENCH_DASHBOARD_SMALL_ROWS ?? Math.round(rows / 10));
  const dataDir = benchDataDir('cp-bench-dash-');
  try {
    const endSec = Math.floor(Date.now() / 60_000) * 60;
    const smallDir = benchDataDir('cp-bench-dash-small-');
    let smallReads: Record<string, number>;
    try {
      smallReads = (await seededReads(smallDir, smallRows, endSec)).reads;
    } finally {
      rmSync(smallDir, { recursive: true, force: true });
    }
    const { reads, seed: seeded } = await seededReads(dataDir, rows, endSec);

    const env = { SVC_DATA_DIR: dataDir, SVC_RETENTION_INTERVAL_MS: String(2 ** 31 - 1) };
    let svc = await startService(env, opts.nodeArgs);
    const served: Array<{ c: Case; quiet: GetRun; run: GetRun; misses: number; computed?: GetRun; json?: any }> = [];
    let all: Case[];
    let masterId: number;
    let ingested = 0;
    try {
      let first: { id: number; master_key: string } | undefined;
      for (let i = 0; i < 200; i++) {
        const r = await call(svc.base, 'POST', '/admin/masters', { body: { name: `m${i}`, group: 'default' }, headers: bearer(benchAdminToken) });
        if (r.status !== 201) throw new Error(`creating a master answered ${r.status}: ${JSON.stringify(r.json)}`);
        first ??= r.json;
      }
      masterId = first!.id;
      all = cases(first!.master_key, masterId, Math.floor(Date.now() / 1000));
      for (const c of all) {
        const headers = bearer(c.token);
        await getLoad(svc.base, c.path, headers, 2);
        const quiet = await getLoad(svc.base, c.path, headers, seconds);
        const feed = ingestLoop(svc.base);
        const before = await cacheMisses(svc.base);
        const run = await getLoad(svc.base, c.path, headers, seconds);
        const misses = (await cacheMisses(svc.base)) - before;
        ingested += await feed.stop();
        served.push({ c, quiet, run, misses });
      }
      // The last records reach ClickHouse within the writer's flush interval (1 s).
      await new Promise((r) => setTimeout(r, 2500));
      await svc.stop();
      svc = await startService({ ...env, SVC_STATS_CACHE_ENTRIES: '0' }, opts.nodeArgs);
      for (const s of served) {
        const headers = bearer(s.c.token);
        await getLoad(svc.base, s.c.path, headers, 2);
        s.computed = await getLoad(svc.base, s.c.path, headers, seconds);
        const probe = await call(svc.base, 'GET', s.c.path, { headers });
        if (probe.status !== 200) throw new Error(`${s.c.path} answered ${probe.status}: ${JSON.stringify(probe.json)}`);
        s.json = probe.json;
      }
    } finally {
      await svc.stop();
    }

    const ch = await openClickHouse({ dataDir });
    const rowsOut: Array<[string, string]> = [];
    const figures: ScenarioResult['figures'] = {
      rows, small_rows: smallRows, seconds, connections, seed_insert_s: seeded.insertS, seed_optimize_s: seeded.optimizeS, seed_disk_mib: diskMiB(dataDir),
    };
    const targets: Target[] = [];
    for (const [call, n] of Object.entries(reads)) {
      const growth = n / Math.max(1, smallReads[call] ?? 0);
      Object.assign(figures, { [`${call}_read_rows`]: n, [`${call}_read_rows_small`]: smallReads[call] ?? 0, [`${call}_read_rows_growth`]: growth });
      targets.push(target(`${call}: rows read at ${fmt(rows)} / at ${fmt(smallRows)} <= 1.5`, growth, 1.5, true));
      rowsOut.push([`${call} rows read`, `${fmt(smallReads[call] ?? 0)} at ${fmt(smallRows)} logs, ${fmt(n)} at ${fmt(rows)} (${growth.toFixed(2)}x)`]);
    }
    let worst = Infinity;
    try {
      for (const [i, { c, quiet, run, misses, computed, json }] of served.entries()) {
        let rawCount = 0;
        const raw = await rawLoad(async () => (rawCount = await c.raw(ch, json)), seconds);
        const ratio = run.rps / raw.rps;
        worst = Math.min(worst, ratio);
        const agree = rawCount === c.served(json);
        const line = (r: GetRun) => `p99 ${fmt(r.p99)} ms, ${fmt(r.rps)} req/s, ${fmt(r.rps / raw.rps)}x`;
        rowsOut.push(
          [c.label, `while ingesting: ${line(run)}, ${fmt(misses)} reads sent to ClickHouse | raw p99 ${fmt(raw.p99)} ms, ${fmt(raw.rps)} /s | counts ${agree ? 'agree' : `DIFFER ${c.served(json)} vs ${rawCount}`}`],
          ['', `no other traffic: ${line(quiet)} | cache off: ${line(computed!)}`],
        );
        Object.assign(figures, {
          [`c${i}_p99_ms`]: run.p99, [`c${i}_p50_ms`]: run.p50, [`c${i}_rps`]: run.rps, [`c${i}_non2xx`]: run.non2xx + run.errors,
          [`c${i}_cache_misses`]: misses, [`c${i}_raw_p99_ms`]: raw.p99, [`c${i}_raw_rps`]: raw.rps, [`c${i}_ratio`]: ratio, [`c${i}_agree`]: agree,
          [`c${i}_quiet_p99_ms`]: quiet.p99, [`c${i}_quiet_rps`]: quiet.rps, [`c${i}_quiet_ratio`]: quiet.rps / raw.rps,
          [`c${i}_nocache_p99_ms`]: computed!.p99, [`c${i}_nocache_rps`]: computed!.rps, [`c${i}_nocache_ratio`]: computed!.rps / raw.rps,
        });
        targets.push(
          target(`${c.label}: p99 < 100 ms while ingesting`, run.p99, 100, true),
          target(`${c.label}: >= 20x raw while ingesting`, ratio, 20),
          target(`${c.label}: same request count as raw`, agree ? 1 : 0, 1),
          target(`${c.label}: zero errors / non-2xx`, run.non2xx + run.errors + quiet.non2xx + quiet.errors + computed!.non2xx + computed!.errors, 0, true),
        );
      }
      figures.ingested_during_runs = ingested;
    } finally {
      await ch.close();
    }
    printTable(`${name}: ${fmt(rows)} rows over 30 days, ${connections} connections, ${seconds} s each`, rowsOut);
    return okResult(name, { name: 'slowest service/raw answers-per-second ratio', value: worst }, figures, targets);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
