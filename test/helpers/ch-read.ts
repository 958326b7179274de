/**
 * Reads a stopped service's embedded ClickHouse and prints, as one JSON line,
 * how many times each `audit_reason` is stored in `logs`, each rollup's
 * totals beside the raw table's, and the rollups that disagree with it group
 * by group (rollup-check.ts). Run as its own process (chDB binds one data
 * directory per process): `node ch-read.js <data dir>`.
 */
import { openClickHouse } from '../../src/storage/clickhouse/open.js';
import { ROLLUPS } from '../../src/storage/clickhouse/rollups.js';
import { rollupMismatches, type RollupMismatch } from '../../src/storage/clickhouse/rollup-check.js';

export interface Stored {
  marks: Record<string, number>;
  /** requests/tokens_in/errors */
  raw: string;
  rollups: Record<string, string>;
  mismatches: RollupMismatch[];
}

const ch = await openClickHouse({ dataDir: process.argv[2]! });
try {
  const marks: Record<string, number> = {};
  for (const r of await ch.query<{ m: string; n: number }>('SELECT audit_reason AS m, count() AS n FROM logs GROUP BY m')) marks[r.m] = Number(r.n);
  const totals = "concat(toString(sum(requests)), '/', toString(sum(tokens_in)), '/', toString(sum(errors)))";
  const [raw] = await ch.query<{ v: string }>("SELECT concat(toString(count()), '/', toString(sum(tokens_in)), '/', toString(countIf(status_code >= 400))) AS v FROM logs");
  const rollups: Record<string, string> = {};
  for (const r of ROLLUPS) rollups[r.table] = (await ch.query<{ v: string }>(`SELECT ${totals} AS v FROM ${r.table}`))[0]!.v;
  const out: Stored = { marks, raw: raw!.v, rollups, mismatches: await rollupMismatches(ch) };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
  await ch.close();
}
