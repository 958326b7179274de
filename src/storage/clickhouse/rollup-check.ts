/**
 * Whether every rollup agrees with the raw `logs` table: per rollup, its rows
 * summed by bucket and dimensions against the same aggregation computed from
 * the raw rows (rollups.ts, rollupSelect: the one definition of what a rollup
 * holds). Used after deletions and retention (tests, the retention-scale
 * bench); it reads the whole raw table, so it is no request-path query.
 */
import type { ClickHouseReader } from './client.js';
import { ROLLUPS, rollupSelect, type Rollup } from './rollups.js';

/** The sums compared (the latency quantile states are not comparable as values). */
const SUMS = ['requests', 'errors', 'tokens_in', 'tokens_out', 'latency_sum'];

export interface RollupMismatch {
  table: string;
  /** Groups (bucket and dimensions) whose sums differ or that exist on one side only. */
  groups: number;
}

function checkSql(r: Rollup): string {
  const keys = [r.bucket.column, ...r.dims.map((d) => d.name)].join(', ');
  const summed = `SELECT ${keys}, ${SUMS.map((s) => `sum(${s}) AS n_${s}`).join(', ')} FROM ${r.table} GROUP BY ${keys} HAVING n_requests > 0`;
  const raw = `SELECT ${keys}, ${SUMS.map((s) => `${s} AS n_${s}`).join(', ')} FROM (\n${rollupSelect(r)}\n)`;
  return `SELECT (SELECT count() FROM (${summed} EXCEPT ${raw})) + (SELECT count() FROM (${raw} EXCEPT ${summed})) AS groups`;
}

/** Every rollup that disagrees with the raw table, with how many of its groups do; empty when all agree. */
export async function rollupMismatches(ch: ClickHouseReader): Promise<RollupMismatch[]> {
  const out: RollupMismatch[] = [];
  for (const r of ROLLUPS) {
    const [row] = await ch.query<{ groups: number }>(checkSql(r));
    const groups = Number(row?.groups ?? 0);
    if (groups > 0) out.push({ table: r.table, groups });
  }
  return out;
}
