/**
 * How many raw logs match a list filter, per time slice, read where it is
 * cheap: whole days, hours and minutes from the rollups that have a dimension
 * for every filtered column, the partial minutes at either end of the range
 * from raw `logs`. The slices give the list its exact total (their sum) and
 * the newest window that holds a page (docs/analytics.md, "The logs list").
 *
 * The rollups are chosen from their one description (rollups.ts, ROLLUPS): for
 * each bucket size, the rollup with the fewest dimensions that still has every
 * filtered column as itself. A filter no rollup carries (an exact status code:
 * the rollups keep its class; errors only: it also counts error messages)
 * answers null, and the caller counts the raw table.
 */
import type { ClickHouseReader, QueryParams } from './client.js';
import { ROLLUPS, type Rollup } from './rollups.js';

/** The filters a rollup may answer: equalities on raw columns, and a range of Unix seconds (since inclusive, until exclusive). */
export interface CountFilter {
  master_id?: number;
  key_id?: number;
  model?: string;
  group?: string;
  status_code?: number;
  error_only?: boolean;
  since?: number;
  until?: number;
}

/** Matching records whose created_at lies in [from, to) (Unix seconds). */
export interface Slice {
  from: number;
  to: number;
  n: number;
}

const EQUALITIES = [
  ['master_id', 'UInt64'],
  ['key_id', 'UInt64'],
  ['model', 'String'],
  ['group', 'String'],
] as const;
const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
const LEVELS = [
  { step: DAY, column: 'day' },
  { step: HOUR, column: 'hour' },
  { step: MINUTE, column: 'minute' },
];
const quote = (c: string): string => (c === 'group' ? '`group`' : c);
const ceilTo = (s: number, step: number): number => Math.ceil(s / step) * step;
const floorTo = (s: number, step: number): number => Math.floor(s / step) * step;
const timeParam = (s: number): string => new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ');

/** The filtered columns, or null when the filter has a condition no rollup keeps. */
function filteredColumns(f: CountFilter): Array<(typeof EQUALITIES)[number]> | null {
  if (f.status_code !== undefined || f.error_only) return null;
  return EQUALITIES.filter(([c]) => f[c] !== undefined);
}

/** The smallest rollup of a bucket column that keeps every filtered column unchanged; null when none does. */
export function rollupFor(column: string, filtered: readonly string[]): Rollup | null {
  const fits = ROLLUPS.filter(
    (r) => r.bucket.column === column && filtered.every((c) => r.dims.some((d) => d.from === c && d.map('x') === 'x')),
  );
  fits.sort((a, b) => a.dims.length - b.dims.length);
  return fits[0] ?? null;
}

interface Piece {
  table: string;
  column: string;
  raw: boolean;
  from: number | null;
  to: number | null;
}

/**
 * [since, until) cut into pieces: whole days, then whole hours and whole
 * minutes outside them, each from a rollup that fits (a bucket size with no
 * fitting rollup is skipped: the next finer one takes its span, raw `logs`
 * after the minutes), then the seconds outside whole minutes from raw `logs`. An open end has no partial
 * minute: the coarsest level runs to it.
 */
function pieces(filtered: readonly string[], since: number | null, until: number | null): Piece[] {
  const out: Piece[] = [];
  const m1 = since === null ? null : ceilTo(since, MINUTE);
  const m2 = until === null ? null : floorTo(until, MINUTE);
  if (m1 !== null && m2 !== null && m2 <= m1) return [{ table: 'logs', column: 'created_at', raw: true, from: since, to: until }];
  if (since !== null && since < m1!) out.push({ table: 'logs', column: 'created_at', raw: true, from: since, to: m1 });
  if (until !== null && m2! < until) out.push({ table: 'logs', column: 'created_at', raw: true, from: m2, to: until });
  let gaps: Array<[number | null, number | null]> = [[m1, m2]];
  for (const level of LEVELS) {
    const rollup = rollupFor(level.column, filtered);
    if (!rollup) continue;
    const last = level.step === MINUTE;
    const next: Array<[number | null, number | null]> = [];
    for (const [lo, hi] of gaps) {
      const a = lo === null ? null : last ? lo : ceilTo(lo, level.step);
      const b = hi === null ? null : last ? hi : floorTo(hi, level.step);
      if (a !== null && b !== null && a >= b) {
        next.push([lo, hi]);
        continue;
      }
      out.push({ table: rollup.table, column: level.column, raw: false, from: a, to: b });
      if (lo !== null && a !== null && lo < a) next.push([lo, a]);
      if (hi !== null && b !== null && b < hi) next.push([b, hi]);
    }
    gaps = next;
  }
  // No minute rollup keeps a key: a key's minutes come from raw `logs`, whose sort key reads just that key.
  for (const [lo, hi] of gaps) out.push({ table: 'logs', column: 'created_at', raw: true, from: lo, to: hi });
  return out;
}

/**
 * Matching records per slice, newest first: per rollup bucket (its whole
 * span) and per partial minute at either end; slices with none are left out.
 * Null when the filter has a condition no rollup keeps.
 */
export async function countSlices(ch: ClickHouseReader, f: CountFilter): Promise<Slice[] | null> {
  const filtered = filteredColumns(f);
  if (!filtered) return null;
  const params: QueryParams = {};
  const conds: string[] = [];
  for (const [c, type] of filtered) {
    conds.push(`${quote(c)} = {${c}:${type}}`);
    params[c] = f[c];
  }
  const selects = pieces(
    filtered.map(([c]) => c),
    f.since ?? null,
    f.until ?? null,
  ).map((p, i) => {
    const type = p.raw ? "DateTime64(3, 'UTC')" : "DateTime('UTC')";
    const where = [...conds];
    if (p.from !== null) {
      where.push(`${p.column} >= {from${i}:${type}}`);
      params[`from${i}`] = timeParam(p.from);
    }
    if (p.to !== null) {
      where.push(`${p.column} < {to${i}:${type}}`);
      params[`to${i}`] = timeParam(p.to);
    }
    const w = where.length ? ` WHERE ${where.join(' AND ')}` : '';
    // A raw piece is one slice (under a minute); a rollup piece is one slice per bucket.
    return p.raw
      ? `SELECT ${p.from ?? 0} AS s, ${p.to ?? 0} AS e, count() AS n FROM logs${w}`
      : `SELECT toUnixTimestamp(${p.column}) AS s, s + ${LEVELS.find((l) => l.column === p.column)!.step} AS e, sum(requests) AS n FROM ${p.table}${w} GROUP BY s`;
  });
  const rows = await ch.query<{ s: number; e: number; n: number }>(
    `SELECT s, e, sum(n) AS n FROM (\n${selects.join('\nUNION ALL\n')}\n) GROUP BY s, e HAVING n > 0 ORDER BY s DESC`,
    params,
  );
  return rows.map((r) => ({ from: Number(r.s), to: Number(r.e), n: Number(r.n) }));
}

/** The exact total of slices. */
export const sliceTotal = (slices: readonly Slice[]): number => slices.reduce((a, s) => a + s.n, 0);

/**
 * The newest start time (Unix seconds) from which the slices hold at least
 * `need` records, or null when they do not: the page newest first lies in
 * [start, until), so its read may skip every older partition and granule.
 */
export function windowStart(slices: readonly Slice[], need: number): number | null {
  let seen = 0;
  for (const s of slices) {
    seen += s.n;
    if (seen >= need) return s.from;
  }
  return null;
}
