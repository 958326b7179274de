/**
 * What the rollups' latency quantile state costs `/v1/stats` as the log count grows, and how close each kind of
 * state comes to the exact percentiles: the figures behind docs/analytics.md, "The latency states as the log count grows".
 *
 * For each size in BENCH_QUANTILE_SIZES (default "20000000,200000000"), on a hard-linked copy of the dashboards
 * bench's seeded store (harness/seeded-store.ts; made if missing), it builds `logs_daily`'s grain (master, day,
 * model, group, status code) once more per candidate state from the raw logs, then times `/v1/stats`'s whole-day
 * read (one master, 29 whole days, by model and by day in one pass) on each, a different master each round, the
 * candidates interleaved, one query at a time. Then, for a few masters, it compares each state's p50/p95/p99
 * with the exact ones over the raw rows. Last, the write side: one day of logs written as the small minute states
 * the views write on every insert, once per candidate, beside the same write without a state.
 * Timings: run it on a quiet machine and compare within one run.
 * Usage: node dist/src/bench/measure-quantile-states.js
 */
import { rmSync } from 'node:fs';
import { openClickHouse } from '../storage/clickhouse/open.js';
import { LATENCY_STATE, latencyFunction, type LatencyState } from '../storage/clickhouse/rollups.js';
import { copyOfStore, seededStore } from './harness/seeded-store.js';
import { median } from './harness/rounds.js';
import { printTable } from './harness/table.js';

/** The rollups' levels, so every candidate answers the same percentiles. */
const LEVELS = LATENCY_STATE.params;
/** Each candidate and its aggregate function (the rollup stores its -State, a read takes its -Merge); null: sums only. */
const STATES: ReadonlyArray<{ name: string; fn: LatencyState | null }> = [
  { name: 'quantiles (reservoir, the rollups\')', fn: LATENCY_STATE },
  { name: 'quantilesTDigest', fn: { fn: 'quantilesTDigest', params: LEVELS } },
  { name: 'quantilesDD(0.01)', fn: { fn: 'quantilesDD', params: `0.01, ${LEVELS}` } },
  { name: 'sums only (floor)', fn: null },
];
/** Rounds of the write measurement (each writes a day of minute states once per kind). */
const WRITE_ROUNDS = 3;
const ROUNDS = Number(process.env.BENCH_QUANTILE_ROUNDS ?? 40);
const DAY = 86_400;

const sizes = (process.env.BENCH_QUANTILE_SIZES ?? '20000000,200000000').split(',').map(Number);
for (const rows of sizes) {
  const store = await seededStore(rows);
  const dir = copyOfStore(store);
  try {
    const ch = await openClickHouse({ dataDir: dir });
    try {
      // Whole days at both ends, so that the states' days and the raw rows' range are the same rows.
      const until = Math.floor(store.endSec / DAY) * DAY;
      const since = until - 29 * DAY;
      const tables: string[] = [];
      const built: Array<[string, string]> = [];
      for (const [i, s] of STATES.entries()) {
        const table = `exp_daily_q${i}`;
        tables.push(table);
        if (!s.fn) continue;
        const t = performance.now();
        await ch.command(`DROP TABLE IF EXISTS ${table}`);
        await ch.command(
          `CREATE TABLE ${table} (day DateTime('UTC'), master_id UInt64, model LowCardinality(String), \`group\` LowCardinality(String),
             status_code UInt16, requests SimpleAggregateFunction(sum, UInt64), q AggregateFunction(${latencyFunction('', s.fn)}, UInt32))
           ENGINE = AggregatingMergeTree PARTITION BY toYYYYMM(day) ORDER BY (master_id, day, model, \`group\`, status_code)`,
        );
        await ch.command(
          `INSERT INTO ${table} SELECT toStartOfDay(created_at) AS day, master_id, model, \`group\`, status_code, count(),
             ${latencyFunction('State', s.fn)}(latency_ms) FROM logs GROUP BY day, master_id, model, \`group\`, status_code
           SETTINGS max_bytes_before_external_group_by = 4000000000`,
        );
        await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
        const [size] = await ch.query<{ rows: number; bytes: number }>(
          `SELECT sum(rows) AS rows, sum(data_compressed_bytes) AS bytes FROM system.parts WHERE active AND table = {t:String}`,
          { t: table },
        );
        built.push([s.name, `${size!.rows} rows, ${(size!.bytes / 1e6).toFixed(0)} MB, built in ${((performance.now() - t) / 1000).toFixed(0)} s`]);
      }
      const read = (i: number, master: number): string => {
        const s = STATES[i]!;
        const from = s.fn ? tables[i] : tables[0];
        const agg = s.fn ? `${latencyFunction('Merge', s.fn)}(q)` : 'sum(requests)';
        return `SELECT model, day, sum(requests) AS n, ${agg} AS qs FROM ${from}
                WHERE master_id = ${master} AND day >= toDateTime(${since}, 'UTC') AND day < toDateTime(${until}, 'UTC')
                GROUP BY GROUPING SETS ((model), (day)) SETTINGS use_query_cache = 0`;
      };
      const ms: number[][] = STATES.map(() => []);
      for (let r = 0; r < ROUNDS; r++) {
        const master = 1 + ((r * 37) % 200);
        for (let k = 0; k < STATES.length; k++) {
          const i = (r + k) % STATES.length;
          const t = performance.now();
          await ch.query(read(i, master));
          ms[i]!.push(performance.now() - t);
        }
      }
      // Relative error of each state's levels against the exact ones over a master's 29 days of raw rows.
      const worst = STATES.map(() => 0);
      for (const master of [3, 57, 111, 160, 199]) {
        const [exact] = await ch.query<{ qs: number[] }>(
          `SELECT quantilesExactInclusive(${LEVELS})(latency_ms) AS qs FROM logs
           WHERE master_id = ${master} AND created_at >= toDateTime(${since}, 'UTC') AND created_at < toDateTime(${until}, 'UTC')`,
        );
        for (const [i, s] of STATES.entries()) {
          if (!s.fn) continue;
          const [got] = await ch.query<{ qs: number[] }>(
            `SELECT ${latencyFunction('Merge', s.fn)}(q) AS qs FROM ${tables[i]}
             WHERE master_id = ${master} AND day >= toDateTime(${since}, 'UTC') AND day < toDateTime(${until}, 'UTC')`,
          );
          exact!.qs.forEach((e, l) => (worst[i] = Math.max(worst[i]!, Math.abs(got!.qs[l]! - e) / e)));
        }
      }
      // The write side: what the views do on every insert, a small state per (minute, master, model, group, status)
      // (a key sends far less than a request a minute, so most hold one or two records). One day of logs is written
      // as such states into a fresh table per kind, kinds interleaved; the floor is the same INSERT writing count() instead
      // of a state.
      const writeMs: number[][] = STATES.map(() => []);
      let states = 0;
      const day = `created_at >= toDateTime(${until - DAY}, 'UTC') AND created_at < toDateTime(${until}, 'UTC')`;
      for (let r = 0; r < WRITE_ROUNDS; r++) {
        for (const [i, s] of STATES.entries()) {
          const table = `exp_minute_q${i}`;
          const state = s.fn ? `${latencyFunction('State', s.fn)}(latency_ms)` : 'count()';
          const stateType = s.fn ? `AggregateFunction(${latencyFunction('', s.fn)}, UInt32)` : 'SimpleAggregateFunction(sum, UInt64)';
          await ch.command(`DROP TABLE IF EXISTS ${table}`);
          await ch.command(
            `CREATE TABLE ${table} (minute DateTime('UTC'), master_id UInt64, model LowCardinality(String), \`group\` LowCardinality(String),
               status_code UInt16, requests SimpleAggregateFunction(sum, UInt64), q ${stateType})
             ENGINE = AggregatingMergeTree PARTITION BY toYYYYMMDD(minute) ORDER BY (master_id, minute, model, \`group\`, status_code)`,
          );
          const t = performance.now();
          await ch.command(
            `INSERT INTO ${table} SELECT toStartOfMinute(created_at) AS minute, master_id, model, \`group\`, status_code, count(), ${state}
             FROM logs WHERE ${day} GROUP BY minute, master_id, model, \`group\`, status_code`,
          );
          writeMs[i]!.push(performance.now() - t);
          states = Number((await ch.query<{ n: number }>(`SELECT count() AS n FROM ${table}`))[0]!.n);
          await ch.command(`DROP TABLE ${table}`);
        }
      }
      const floorWrite = median(writeMs[STATES.length - 1]!);
      const written: Array<[string, string]> = STATES.map((s, i) => [
        `write: ${s.name}`,
        `${states} minute states of a day in ${median(writeMs[i]!).toFixed(0)} ms` +
          (s.fn ? `, ${(((median(writeMs[i]!) - floorWrite) / states) * 1000).toFixed(2)} µs a state above the floor` : ''),
      ]);
      printTable(`quantile states at ${rows.toLocaleString('en-US')} logs: /v1/stats's whole days, one master, ${ROUNDS} rounds`, [
        ...built,
        ...written,
        ...STATES.map((s, i): [string, string] => [
          s.name,
          `median ${median(ms[i]!).toFixed(1)} ms, p90 ${[...ms[i]!].sort((a, b) => a - b)[Math.floor(ms[i]!.length * 0.9)]!.toFixed(1)} ms` +
            (s.fn ? `, worst relative error of p50/p95/p99 ${(worst[i]! * 100).toFixed(2)}%` : ''),
        ]),
      ]);
    } finally {
      await ch.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
