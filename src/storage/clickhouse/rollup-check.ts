/**
 * Whether the rollups agree with the raw `logs` table, and their repair after
 * a crash replay.
 * - rollupMismatches: per rollup, its rows summed by bucket and dimensions
 *   against the same aggregation computed from the raw rows (rollups.ts,
 *   rollupSelectFrom: the one definition of what a rollup holds). Used after
 *   deletions and retention (tests, the retention-scale bench); it reads the
 *   whole raw table, so it is no request-path query.
 * - repairRollups: after batches were replayed from the write-ahead file, the
 *   same comparison over just the buckets they touched, each rollup against the
 *   finer table it can be computed from (checked first, so a repair below is
 *   in place before the level above is compared with it), and the buckets that
 *   differ rebuilt from it. A crash can leave a rollup without a block of the
 *   batch it cut short: ClickHouse records a block for deduplication before it
 *   commits the block's part, so the replay under the same token is skipped
 *   (docs/log-pipeline.md, "After a crash").
 */
import type { ClickHouse, ClickHouseReader, QueryParams } from './client.js';
import { grainOf, rebuildInsertSql, ROLLUP_SUMS, ROLLUPS, rollupName, rollupSelectFrom, rollupWhere, type Rollup } from './rollups.js';
import { bucketRanges, DAY, withinRanges } from './range-cut.js';

export interface RollupMismatch {
  /** The rollup (rollups.ts, rollupName: its table, and its grain where the table holds several). */
  table: string;
  /** Groups (bucket and dimensions) whose sums differ or that exist on one side only. */
  groups: number;
}

/** Where a rollup's comparison looks: its own rows (`rollup`) and its source's (`source`), both optional. */
interface Restriction {
  rollup?: string;
  source?: string;
}

/**
 * Groups of `r` that differ from the same aggregation over `source` (null: raw
 * `logs`). Both sides in one pass: a group (bucket, dimensions and sums) found
 * on both sides agrees, one found on one side only differs and is counted once
 * per side, as two EXCEPTs would count it, with each side computed once
 * instead of twice (each side's groups are distinct: they come from a GROUP BY).
 */
function compareSql(r: Rollup, source: Rollup | null, where: Restriction = {}): string {
  const keys = [r.bucket.column, ...r.dims.map((d) => d.name)].join(', ');
  const sums = ROLLUP_SUMS.map((s) => `n_${s}`).join(', ');
  const own = rollupWhere(r, where.rollup);
  const summed = `SELECT ${keys}, ${ROLLUP_SUMS.map((s) => `sum(${s}) AS n_${s}`).join(', ')} FROM ${r.table}${own ? ` WHERE ${own}` : ''} GROUP BY ${keys} HAVING n_requests > 0`;
  const computed = `SELECT ${keys}, ${ROLLUP_SUMS.map((s) => `${s} AS n_${s}`).join(', ')} FROM (\n${rollupSelectFrom(r, source, where.source)}\n) WHERE requests > 0`;
  return `SELECT count() AS groups FROM (SELECT count() AS sides FROM (${summed} UNION ALL ${computed}) GROUP BY ${keys}, ${sums} HAVING sides = 1)`;
}

/**
 * Every rollup that disagrees with the raw table, with how many of its groups
 * do; empty when all agree. `viaSources`: each rollup is compared with the
 * table it is computed from (checkSource; finest first), so only the rollups
 * with no finer source read the raw table (three scans of it instead of one per
 * rollup). The list is empty exactly when every rollup agrees with the raw
 * table; a table named then differs from its source, not necessarily from raw.
 * `byDay`: each comparison runs one UTC day at a time (every grain divides a
 * day), so its aggregation holds one day's groups: over a large store the
 * whole-table comparison holds every key's minutes at once and its memory, not
 * the scan, sets its time.
 */
export async function rollupMismatches(ch: ClickHouseReader, opts: { viaSources?: boolean; byDay?: boolean } = {}): Promise<RollupMismatch[]> {
  const out: RollupMismatch[] = [];
  const days = opts.byDay ? await storedDays(ch) : null;
  for (const r of opts.viaSources ? CHAIN : ROLLUPS) {
    const source = opts.viaSources ? checkSource(r) : null;
    let groups = 0;
    for (const day of days ?? [null]) {
      const params: QueryParams = {};
      const where = day === null ? {} : timeRestriction(r, source, [[day, day + DAY]], params);
      const [row] = await ch.query<{ groups: number }>(compareSql(r, source, where), params);
      groups += Number(row?.groups ?? 0);
    }
    if (groups > 0) out.push({ table: rollupName(r), groups });
  }
  return out;
}

/** The UTC days (Unix seconds at midnight, ascending) holding rows in `logs` or any rollup. */
async function storedDays(ch: ClickHouseReader): Promise<number[]> {
  const columns = new Map<string, string>([['logs', 'created_at'], ...ROLLUPS.map((r): [string, string] => [r.table, r.bucket.column])]);
  const union = [...columns].map(([t, c]) => `SELECT DISTINCT toUInt32(toStartOfDay(${c}, 'UTC')) AS day FROM ${t}`).join(' UNION DISTINCT ');
  const rows = await ch.query<{ day: number }>(`SELECT day FROM (${union}) ORDER BY day`);
  return rows.map((r) => Number(r.day));
}

/** Finest grain first; at one grain, more dimensions first (a rollup with fewer can be computed from one with more). */
const CHAIN: readonly Rollup[] = [...ROLLUPS].sort((a, b) => grainOf(a) - grainOf(b) || b.dims.length - a.dims.length);

/**
 * The table a rollup is checked against and rebuilt from: among the rollups
 * before it in CHAIN, one with all its dimensions and a grain dividing its own,
 * the coarsest with the fewest dimensions (the fewest rows to read); else raw
 * `logs` (null).
 */
export function checkSource(r: Rollup): Rollup | null {
  const grain = grainOf(r);
  let best: Rollup | null = null;
  for (const s of CHAIN.slice(0, CHAIN.indexOf(r))) {
    const g = grainOf(s);
    if (grain % g !== 0 || !r.dims.every((d) => s.dims.some((x) => x.name === d.name))) continue;
    if (!best || g > grainOf(best) || (g === grainOf(best) && s.dims.length < best.dims.length)) best = s;
  }
  return best;
}

/** What replayed batches touched: the seconds their records were created in (Unix, sorted, distinct), the masters and keys. */
export interface ReplaySpan {
  seconds: readonly number[];
  masters: readonly number[];
  keys: readonly number[];
}

/** The buckets of `r` within `ranges` (Unix seconds), and the same time on its source's side (raw `logs` when null). */
function timeRestriction(r: Rollup, source: Rollup | null, ranges: ReadonlyArray<[number, number]>, params: QueryParams): Required<Restriction> {
  return {
    rollup: withinRanges(r.bucket.column, "DateTime('UTC')", ranges, params),
    source: source ? withinRanges(source.bucket.column, "DateTime('UTC')", ranges, params) : withinRanges('created_at', "DateTime64(3, 'UTC')", ranges, params),
  };
}

/** The buckets of `r` the span touches, on the rollup's side and the source's, with the masters and keys as filters (on both sides). */
function restriction(r: Rollup, source: Rollup | null, span: ReplaySpan, params: QueryParams): Restriction {
  const time = timeRestriction(r, source, bucketRanges(span.seconds, grainOf(r)), params);
  const filters: string[] = [];
  if (r.dims.some((d) => d.name === 'master_id')) {
    params.masters = span.masters;
    filters.push('has({masters:Array(UInt64)}, master_id)');
  }
  if (r.dims.some((d) => d.name === 'key_id')) {
    params.keys = span.keys;
    filters.push('has({keys:Array(UInt64)}, key_id)');
  }
  return { rollup: [time.rollup, ...filters].join(' AND '), source: [time.source, ...filters].join(' AND ') };
}

/**
 * Makes every rollup agree, over the buckets `span` touches, with the table
 * it is computed from (checkSource), finest first; returns the rollups whose
 * buckets were rebuilt. Each rebuild deletes the touched buckets' rows and
 * inserts them again from the source (never deduplicated: a rebuilt block may
 * equal an earlier one). Run it while this node inserts nothing (the writer
 * does, before its first new batch); another node inserting into the same
 * buckets meanwhile could be counted twice.
 */
export async function repairRollups(ch: ClickHouse, span: ReplaySpan): Promise<string[]> {
  const rebuilt: string[] = [];
  if (span.seconds.length === 0) return rebuilt;
  for (const r of CHAIN) {
    const source = checkSource(r);
    const params: QueryParams = {};
    const where = restriction(r, source, span, params);
    const [row] = await ch.query<{ groups: number }>(compareSql(r, source, where), params);
    if (Number(row?.groups ?? 0) === 0) continue;
    await ch.command(`DELETE FROM ${r.table} WHERE ${rollupWhere(r, where.rollup)}`, params);
    await ch.command(rebuildInsertSql(r, rollupSelectFrom(r, source, where.source)), params);
    rebuilt.push(rollupName(r));
  }
  return rebuilt;
}
