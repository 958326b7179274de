/**
 * dashboards: cold reads of the analytics endpoints over a large log history
 * at two sizes in one run (issue 25; docs/performance.md, "Running the bench").
 *
 * Sizes: BENCH_DASHBOARD_ROWS, comma-separated (default 20,000,000 and
 * 200,000,000; one size alone is measured beside a tenth of it). Per size:
 * 1. The seeded store of that many rows (harness/seeded-store.ts: seeded once
 *    through SQL, 30 days of 200 masters, 5,000 keys, 40 models, then reused);
 *    its seeding time and disk are printed.
 * 2. The rows each call's reads take (`read_rows`, as ClickHouse counts them
 *    in its query statistics: dashboard-reads.ts), on the store as seeded.
 * 3. The built service on a hard-linked copy of it, with the statistics cache
 *    off (SVC_STATS_CACHE_ENTRIES=0; ClickHouse's query cache is off by
 *    default and the service never turns it on), 200 masters created (ids
 *    1-200, as in the logs), and a data plane posting 2,000 records a second
 *    throughout, its records stamped 30 s ahead so that each is stored before
 *    any read's range reaches it.
 * 4. Per call (dashboard-calls.ts), 10 connections for the run's seconds, each
 *    request taken from a list drawn from a seeded random source
 *    (BENCH_DASHBOARD_SEED, default 1): every one another range of the seeded
 *    history or another master; the summary and the system realtime view, which
 *    take neither, read the period ending at their own second.
 * 5. The service stopped, every answer timed is checked against the raw
 *    `logs` table for the range it reports (identical answers once; a few
 *    batched raw reads per call, a sample by direct queries: checkAnswers);
 *    any difference fails the scenario.
 * Figures: `<call>_cold_p99_ms` at the largest size with `rows` beside them,
 * `_small` at the smaller, `<call>_read_rows` at both and their growth
 * (target <= 1.5), and per size one entry of `rounds`. Targets: p99 < 100 ms.
 */
import { rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { bearer, call } from '../harness/http.js';
import { repoPath } from '../harness/paths.js';
import { okResult, target, type ScenarioResult, type Target } from '../harness/results.js';
import { benchAdminToken, startService } from '../harness/service.js';
import { fmt, printTable } from '../harness/table.js';
import { coldLoad, percentile, seededRandom, type ColdRequest, type TimedAnswer } from '../harness/cold-load.js';
import { copyOfStore, seededStore, type SeededStore } from '../harness/seeded-store.js';
import { countingReader } from '../harness/read-rows.js';
import type { ClickHouse } from '../../storage/clickhouse/client.js';
import { openClickHouse } from '../../storage/clickhouse/open.js';
import { migrateClickHouse } from '../../storage/clickhouse/migrate.js';
import { ROLLUPS } from '../../storage/clickhouse/rollups.js';
import { measureReads } from './dashboard-reads.js';
import { batchedSource, directSource, recordingSource } from './raw-figures.js';
import { dashboardCalls, type DashboardCall, type Master } from './dashboard-calls.js';

const name = 'dashboards';
const connections = 10;
const DAY = 86_400;
const TARGET_P99_MS = 100;
/** How far ahead the data plane stamps its records: well past the writer's flush interval (1 s). */
const AHEAD_S = 30;

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
FROM (SELECT number, 1 + ${h(1)} % 200 AS m FROM numbers_mt(${rows}))
-- A stream a core, the rollups' views side by side: on 2 cores 4M rows in 49 s rather than 95 s (2026-12-06, schema 020).
SETTINGS max_insert_threads = ${availableParallelism()}, parallel_view_processing = 1`;
}

/**
 * While seeding, a part a merge replaced is deleted at once (ClickHouse keeps it 8 minutes by default, and
 * checks about once a minute): at 20M rows the seeded store took 316 MB per million rows counting replaced
 * parts, and a 200M seed would have needed ~63 GB of free disk on the way. Reset once seeded, so the store
 * serves the scenarios with the schema's own settings.
 */
const SEED_CLEANUP = { old_parts_lifetime: 0, cleanup_delay_period: 1, cleanup_delay_period_random_add: 0 };
const INACTIVE_PARTS_WAIT_MS = 120_000;

async function mergeTreeTables(ch: ClickHouse): Promise<string[]> {
  const rows = await ch.query<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' ORDER BY name`,
  );
  return rows.map((r) => r.name);
}

/**
 * Deletes the parts OPTIMIZE replaced, waiting (bounded) until none is left on disk. Reattaching a table makes
 * ClickHouse look at its parts at once: left alone, an idle table's cleanup backs off, and 1M rows' replaced
 * parts were still there two minutes after the last OPTIMIZE.
 */
async function dropReplacedParts(ch: ClickHouse, tables: string[]): Promise<void> {
  for (const table of tables) {
    await ch.command(`DETACH TABLE ${table}`);
    await ch.command(`ATTACH TABLE ${table}`);
  }
  const deadline = Date.now() + INACTIVE_PARTS_WAIT_MS;
  for (;;) {
    const [{ n }] = await ch.query<{ n: number }>(`SELECT count() AS n FROM system.parts WHERE database = currentDatabase() AND NOT active`);
    if (Number(n) === 0 || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export async function seed(dataDir: string, rows: number, endSec: number): Promise<{ insertS: number; optimizeS: number }> {
  const ch = await openClickHouse({ dataDir });
  try {
    await migrateClickHouse(ch, repoPath('sql/clickhouse'));
    const tables = await mergeTreeTables(ch);
    const cleanup = Object.entries(SEED_CLEANUP).map(([k, v]) => `${k} = ${v}`).join(', ');
    for (const table of tables) await ch.command(`ALTER TABLE ${table} MODIFY SETTING ${cleanup}`);
    let t = performance.now();
    await ch.command(seedSql(rows, endSec));
    const insertS = (performance.now() - t) / 1000;
    t = performance.now();
    // A history's parts are merged, the raw table's too: left unmerged, the service would spend the first minutes
    // of any scenario merging 20M rows (seen in ingest-history: MergeMutate at 0.2-0.4 cores).
    for (const table of new Set(['logs', ...ROLLUPS.map((r) => r.table)])) await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
    await dropReplacedParts(ch, tables);
    for (const table of tables) await ch.command(`ALTER TABLE ${table} RESET SETTING ${Object.keys(SEED_CLEANUP).join(', ')}`);
    return { insertS, optimizeS: (performance.now() - t) / 1000 };
  } finally {
    await ch.close();
  }
}

/**
 * A data plane beside the dashboards: NDJSON batches of 200 records every 100 ms
 * (2,000 a second) spread over the 200 masters and 40 models, stamped now, or
 * `aheadS` seconds ahead: a record is then stored well before any read's range
 * reaches its time, so an answer can be checked against the raw table later.
 * stop() ends it and returns the records accepted.
 */
export function ingestLoop(base: string, aheadS = 0): { stop: () => Promise<number> } {
  let accepted = 0;
  let n = 0;
  let running = true;
  const line = () => {
    const m = 1 + (n++ % 200);
    const createdAt = aheadS ? { createdAt: new Date(Date.now() + aheadS * 1000).toISOString() } : {};
    return JSON.stringify({ master_id: m, key_id: m * 25 + (n % 25), model: `model-${n % 40}`, group: `g${m % 4}`, status_code: n % 50 ? 200 : 500, latency_ms: 50 + (n % 900), tokens_in: n % 2000, tokens_out: n % 800, ...createdAt });
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

/** The sizes of one run, smallest first. */
export function dashboardSizes(env = process.env.BENCH_DASHBOARD_ROWS): number[] {
  const given = (env ?? '20000000,200000000').split(',').map((x) => Number(x.trim()));
  if (given.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`BENCH_DASHBOARD_ROWS: row counts, comma-separated (got ${env})`);
  const sizes = given.length === 1 ? [Math.max(1, Math.round(given[0]! / 10)), given[0]!] : given;
  return [...new Set(sizes)].sort((a, b) => a - b);
}

interface CallFigures {
  p50: number;
  p99: number;
  answers: number;
  errors: number;
  exhausted: boolean;
  differences: number;
  firstDifference: string | null;
  /** p99 of the direct raw-table checks (a sample of the distinct answers: checkAnswers). */
  rawP99: number;
  /** Seconds the whole check of the call took. */
  checkS: number;
}

interface SizeRun {
  store: SeededStore;
  reads: Record<string, number>;
  calls: Record<string, CallFigures>;
  ingested: number;
}

/** Answers checked against the raw table by direct queries, per call: their times are the `raw check` figure. */
const DIRECT_CHECKS = Number(process.env.BENCH_DASHBOARD_DIRECT_CHECKS ?? 20);

type CheckFigures = Pick<CallFigures, 'differences' | 'firstDifference' | 'rawP99' | 'checkS'>;

/** Answers to the same request with the same body are one answer to check. */
const answerKey = (a: TimedAnswer<ColdRequest>): string => `${a.req.path}|${a.req.token}|${JSON.stringify(a.json)}`;

/**
 * Checks every answer against the raw table (raw-figures.ts): all of a call's
 * distinct answers from one batched source (a recording pass learns the
 * ranges they need), and the first DIRECT_CHECKS of them again by direct
 * queries, timed. An answer identical to one checked already is not checked again.
 */
async function checkAnswers(dir: string, runs: Array<{ call: DashboardCall; answers: Array<TimedAnswer<ColdRequest>> }>): Promise<Map<string, CheckFigures>> {
  const ch = await openClickHouse({ dataDir: dir });
  const out = new Map<string, CheckFigures>();
  try {
    const direct = directSource(ch);
    for (const { call: c, answers } of runs) {
      const started = performance.now();
      const distinct = new Map<string, TimedAnswer<ColdRequest>>();
      for (const a of answers) if (a.status === 200) distinct.set(answerKey(a), a);
      const recording = recordingSource();
      for (const a of distinct.values()) await c.check(recording, a.json, a.req);
      const batched = await batchedSource(ch, recording.asked);
      const verdicts = new Map<string, string | null>();
      for (const [key, a] of distinct) verdicts.set(key, await c.check(batched, a.json, a.req));
      const times: number[] = [];
      for (const [key, a] of [...distinct].slice(0, DIRECT_CHECKS)) {
        const t = performance.now();
        const verdict = await c.check(direct, a.json, a.req);
        times.push(performance.now() - t);
        if (verdict !== null) verdicts.set(key, `direct query: ${verdict}`);
      }
      let differences = 0;
      let firstDifference: string | null = null;
      for (const a of answers) {
        const verdict = a.status === 200 ? verdicts.get(answerKey(a))! : null;
        if (verdict !== null) {
          differences++;
          firstDifference ??= `${a.req.path}: ${verdict}`;
        }
      }
      out.set(c.name, { differences, firstDifference, rawP99: percentile(times.sort((x, y) => x - y), 99), checkS: (performance.now() - started) / 1000 });
    }
  } finally {
    await ch.close();
  }
  return out;
}

async function runSize(rows: number, seconds: number, seed: number, nodeArgs?: string[]): Promise<SizeRun> {
  const store = await seededStore(rows);
  const reader = await countingReader(store.dir);
  let reads: Record<string, number>;
  try {
    reads = await measureReads(reader, store.endSec, 1);
  } finally {
    reader.close();
  }
  const dir = copyOfStore(store);
  const timed: Array<{ call: DashboardCall; run: Awaited<ReturnType<typeof coldLoad<ColdRequest>>> }> = [];
  let ingested = 0;
  try {
    const svc = await startService({ SVC_DATA_DIR: dir, SVC_RETENTION_INTERVAL_MS: String(2 ** 31 - 1), SVC_STATS_CACHE_ENTRIES: '0' }, nodeArgs);
    try {
      const masters: Master[] = [];
      for (let i = 0; i < 200; i++) {
        const r = await call(svc.base, 'POST', '/admin/masters', { body: { name: `m${i}`, group: 'default' }, headers: bearer(benchAdminToken) });
        if (r.status !== 201) throw new Error(`creating a master answered ${r.status}: ${JSON.stringify(r.json)}`);
        masters.push({ id: r.json.id, key: r.json.master_key });
      }
      const rand = seededRandom(seed);
      const feed = ingestLoop(svc.base, AHEAD_S);
      try {
        for (const c of dashboardCalls(store.endSec, masters, benchAdminToken)) {
          // More requests than the run can send (a list that runs out ends the call's run, and is reported).
          const requests = Array.from({ length: Math.max(2000, seconds * 2000) }, () => c.request(rand));
          timed.push({ call: c, run: await coldLoad(svc.base, requests, connections, seconds) });
        }
      } finally {
        ingested = await feed.stop();
      }
      // The last records reach ClickHouse within the writer's flush interval (1 s).
      await new Promise((r) => setTimeout(r, 2500));
    } finally {
      await svc.stop();
    }
    const checked = await checkAnswers(dir, timed.map((t) => ({ call: t.call, answers: t.run.answers })));
    const calls: Record<string, CallFigures> = {};
    for (const { call: c, run } of timed) {
      calls[c.name] = { p50: run.p50, p99: run.p99, answers: run.answers.length, errors: run.errors, exhausted: run.exhausted, ...checked.get(c.name)! };
    }
    return { store, reads, calls, ingested };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function dashboards(opts: { seconds?: number; nodeArgs?: string[] } = {}): Promise<ScenarioResult> {
  const seconds = opts.seconds ?? 10;
  const seed = Number(process.env.BENCH_DASHBOARD_SEED ?? 1);
  const sizes = dashboardSizes();
  const runs: SizeRun[] = [];
  for (const rows of sizes) runs.push(await runSize(rows, seconds, seed, opts.nodeArgs));
  const big = runs[runs.length - 1]!;
  const small = runs.length > 1 ? runs[0]! : undefined;

  const figures: ScenarioResult['figures'] = { rows: big.store.rows, small_rows: small?.store.rows ?? null, seconds, connections, seed };
  const rounds: Array<Record<string, number>> = [];
  const targets: Target[] = [];
  const table: Array<[string, string]> = [];
  let worst = Infinity;
  for (const r of runs) {
    const mib = r.store.bytes / 2 ** 20;
    table.push([`${fmt(r.store.rows)} rows`, `seeded in ${fmt(r.store.seedSeconds)} s${r.store.reused ? ' (reused)' : ''}, ${fmt(mib)} MiB, ${fmt(r.ingested)} records posted meanwhile`]);
    const round: Record<string, number> = { rows: r.store.rows, seed_s: r.store.seedSeconds, disk_mib: mib, ingested: r.ingested };
    for (const [callName, f] of Object.entries(r.calls)) {
      Object.assign(round, { [`${callName}_cold_p99_ms`]: f.p99, [`${callName}_cold_p50_ms`]: f.p50, [`${callName}_answers`]: f.answers, [`${callName}_raw_p99_ms`]: f.rawP99, [`${callName}_check_s`]: f.checkS });
      table.push([
        `  ${callName}`,
        `p50 ${fmt(f.p50)} ms, p99 ${fmt(f.p99)} ms, ${fmt(f.answers)} answers, read_rows ${fmt(r.reads[callName] ?? 0)} | raw check p99 ${fmt(f.rawP99)} ms, all checked in ${fmt(f.checkS)} s, ${f.differences ? `${f.differences} DIFFER (${f.firstDifference})` : 'all equal'}`,
      ]);
      const at = `${callName} at ${fmt(r.store.rows)}`;
      targets.push(
        target(`${at}: cold p99 < ${TARGET_P99_MS} ms`, f.p99, TARGET_P99_MS, true),
        target(`${at}: every answer equals the raw table's`, f.differences, 0, true),
        target(`${at}: zero errors, request list not exhausted`, f.errors + (f.exhausted ? 1 : 0), 0, true),
      );
      if (r === big) worst = Math.min(worst, f.rawP99 / Math.max(f.p99, 1e-3));
    }
    for (const [callName, n] of Object.entries(r.reads)) round[`${callName}_read_rows`] = n;
    rounds.push(round);
  }
  for (const [callName, f] of Object.entries(big.calls)) {
    figures[`${callName}_cold_p99_ms`] = f.p99;
    if (small) figures[`${callName}_cold_p99_ms_small`] = small.calls[callName]?.p99 ?? null;
  }
  for (const [callName, n] of Object.entries(big.reads)) {
    figures[`${callName}_read_rows`] = n;
    if (!small) continue;
    const growth = n / Math.max(1, small.reads[callName] ?? 0);
    Object.assign(figures, { [`${callName}_read_rows_small`]: small.reads[callName] ?? 0, [`${callName}_read_rows_growth`]: growth });
    targets.push(target(`${callName}: read_rows at ${fmt(big.store.rows)} / at ${fmt(small.store.rows)} <= 1.5`, growth, 1.5, true));
  }
  printTable(`${name}: cold reads (statistics cache off), ${connections} connections, ${seconds} s per call, data plane posting 2,000 records/s`, table);
  return okResult(name, { name: 'slowest call: raw-table check p99 / service cold p99', value: worst }, figures, targets, rounds);
}
