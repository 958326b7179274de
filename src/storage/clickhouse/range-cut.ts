/**
 * How a time range is cut into the pieces it is read from, exact to the
 * second: whole buckets of the coarsest level that fits, the finer levels for
 * what is left on either side, and the seconds outside whole minutes at each
 * end. One cut for the statistics (stats.ts) and the list's counts
 * (log-counts.ts); each chooses the table of every level and of the edges.
 * Also the time conditions of those pieces and of a crash replay's spans
 * (bucketRanges, withinRanges: log-replay.ts, rollup-check.ts).
 */
import type { QueryParams } from './client.js';

/** A span of a range read from one table: a rollup's whole buckets, or raw `logs` (`raw`). Null bounds are open. */
export interface RangePiece<B extends number | null = number | null> {
  table: string;
  column: string;
  /** The grain of the rows read, in a table that holds several (rollups.ts, Rollup.grain). */
  grain?: number;
  raw: boolean;
  from: B;
  to: B;
}

/** A level of whole buckets: its step (seconds), and the table and time column it is read from. */
export interface CutLevel {
  step: number;
  table: string;
  column: string;
  /** Set when the table holds several grains: its rows of this level are those with `grain` = step. */
  shared?: boolean;
  raw?: boolean;
  /**
   * When the range holds at most this many whole buckets of this level, the
   * level takes none and the finer levels (or the edge) read them: opening
   * one more table costs more than a few more rows of one already read.
   */
  finerUpTo?: number;
}

export const MINUTE = 60;
export const HOUR = 3600;
export const DAY = 86_400;
const ceilTo = (s: number, step: number): number => Math.ceil(s / step) * step;
const floorTo = (s: number, step: number): number => Math.floor(s / step) * step;
/** Unix seconds as a DateTime parameter's text (UTC). */
export const timeParam = (s: number): string => new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ');

/**
 * [since, until) cut into pieces that together read every second of it once,
 * coarsest first: each level in `levels` (coarsest first, minute-aligned steps)
 * takes the whole buckets of what coarser levels left; what no level took
 * (whole minutes when the minute level is missing) goes to `rest`, and the
 * seconds before the first whole minute and from the last one on to `edge`.
 * An open end (null) has no partial minute: the coarsest level runs to it.
 */
export function cutRange<B extends number | null>(
  since: B,
  until: B,
  levels: readonly CutLevel[],
  edge: (from: number, to: number) => RangePiece<number>,
  rest: (from: B, to: B) => RangePiece<B> = edge as unknown as (from: B, to: B) => RangePiece<B>,
): RangePiece<B>[] {
  if (since !== null && until !== null && until <= since) return [];
  const m1 = (since === null ? null : ceilTo(since, MINUTE)) as B;
  const m2 = (until === null ? null : floorTo(until, MINUTE)) as B;
  if (m1 !== null && m2 !== null && m2 <= m1) return [edge(since!, until!) as RangePiece<B>];
  const edges: RangePiece<B>[] = [];
  if (since !== null && since < m1!) edges.push(edge(since, m1!) as RangePiece<B>);
  if (until !== null && m2! < until) edges.push(edge(m2!, until) as RangePiece<B>);
  const out: RangePiece<B>[] = [];
  // [lo, hi): what is still to read at the next finer level, on both sides of what coarser levels took.
  let gaps: Array<[B, B]> = [[m1, m2]];
  for (const level of levels) {
    if (level.finerUpTo !== undefined && wholeBuckets(gaps, level.step) <= level.finerUpTo) continue;
    const next: Array<[B, B]> = [];
    for (const [lo, hi] of gaps) {
      const a = (lo === null ? null : ceilTo(lo, level.step)) as B;
      const b = (hi === null ? null : floorTo(hi, level.step)) as B;
      if (a !== null && b !== null && a >= b) {
        next.push([lo, hi]);
        continue;
      }
      out.push({ table: level.table, column: level.column, ...(level.shared ? { grain: level.step } : {}), raw: level.raw === true, from: a, to: b });
      if (lo !== null && lo < a!) next.push([lo, a]);
      if (hi !== null && b! < hi) next.push([b, hi]);
    }
    gaps = next;
  }
  for (const [lo, hi] of gaps) out.push(rest(lo, hi));
  return [...out, ...edges];
}

/**
 * Pieces of one table that meet (one's end is the other's start) joined into
 * one, in the order first seen: a table read with one range fewer costs the
 * engine less to plan and read (~1-2 ms a range in chDB). Within one cut only
 * raw pieces meet (the whole minutes no rollup took and the seconds beside
 * them); across the adjacent periods of one read (a realtime window and the
 * minutes before it, a period and its previous one) any level may. Open
 * bounds never meet.
 */
export function joinAdjacent<B extends number | null>(pieces: readonly RangePiece<B>[]): RangePiece<B>[] {
  const out = pieces.map((p) => ({ ...p }));
  const meets = (a: RangePiece<B>, b: RangePiece<B>): boolean => a.to !== null && a.to === b.from;
  for (let i = 0; i < out.length; i++) {
    for (let j = i + 1; j < out.length; ) {
      const a = out[i]!;
      const b = out[j]!;
      if (a.table === b.table && a.column === b.column && a.grain === b.grain && a.raw === b.raw && (meets(a, b) || meets(b, a))) {
        if (meets(a, b)) a.to = b.to;
        else a.from = b.from;
        out.splice(j, 1);
        j = i + 1; // a grew: it may now meet a piece passed over
      } else j++;
    }
  }
  return out;
}

/** Whole buckets of `step` seconds within the gaps (an open gap holds any number). */
function wholeBuckets(gaps: ReadonlyArray<[number | null, number | null]>, step: number): number {
  let n = 0;
  for (const [lo, hi] of gaps) {
    if (lo === null || hi === null) return Infinity;
    n += Math.max(0, (floorTo(hi, step) - ceilTo(lo, step)) / step);
  }
  return n;
}

/**
 * Unix seconds as SQL text: a rollup's DateTime column compared with a plain
 * number prunes as a bound DateTime does, and the engine parses and plans it for
 * less (a dashboard summary: -9% CPU a read against `CAST('...' AS DateTime)`).
 * Only whole seconds we computed come here; anything else is a bug.
 */
export function secondsLiteral(s: number): string {
  if (!Number.isSafeInteger(s) || s < 0) throw new RangeError(`not a time in Unix seconds: ${s}`);
  return String(s);
}

/**
 * A piece's conditions: its grain in a shared table, and its time. A rollup's
 * bounds are number literals (secondsLiteral); raw created_at binds as
 * DateTime64(3) `from<i>` / `to<i>` in `params`, so that both prune.
 */
export function pieceBounds(p: RangePiece, i: number | string, params: QueryParams): string[] {
  const out: string[] = p.grain === undefined ? [] : [`grain = ${p.grain}`];
  const bound = (name: string, s: number): string => {
    if (!p.raw) return secondsLiteral(s);
    params[name] = timeParam(s);
    return `{${name}:DateTime64(3, 'UTC')}`;
  };
  if (p.from !== null) out.push(`${p.column} >= ${bound(`from${i}`, p.from)}`);
  if (p.to !== null) out.push(`${p.column} < ${bound(`to${i}`, p.to)}`);
  return out;
}

/** The most time ranges one check reads; beyond it the closest ranges are joined (a batch may span up to 100 days). */
const MAX_RANGES = 64;

/** [from, to) ranges of whole buckets of `grain` seconds covering `seconds` (sorted), at most MAX_RANGES of them. */
export function bucketRanges(seconds: readonly number[], grain: number): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (const s of seconds) {
    const b = Math.floor(s / grain) * grain;
    const last = runs[runs.length - 1];
    if (last && b <= last[1]) last[1] = Math.max(last[1], b + grain);
    else runs.push([b, b + grain]);
  }
  if (runs.length <= MAX_RANGES) return runs;
  // Keep the widest gaps as separators and join across the others.
  const gaps = runs.slice(1).map((r, i) => r[0] - runs[i]![1]);
  const cut = [...gaps].sort((a, b) => b - a)[MAX_RANGES - 2]!;
  const out: Array<[number, number]> = [[runs[0]![0], runs[0]![1]]];
  let kept = 0;
  for (let i = 1; i < runs.length; i++) {
    if (gaps[i - 1]! >= cut && kept < MAX_RANGES - 1) {
      out.push([runs[i]![0], runs[i]![1]]);
      kept++;
    } else out[out.length - 1]![1] = runs[i]![1];
  }
  return out;
}

/** `column` within any of `ranges` (Unix seconds, [from, to)), bound as `lo<i>`/`hi<i>` of `type` in `params`. */
export function withinRanges(column: string, type: string, ranges: ReadonlyArray<[number, number]>, params: QueryParams): string {
  const arms = ranges.map(([from, to], i) => {
    params[`lo${i}`] = timeParam(from);
    params[`hi${i}`] = timeParam(to);
    return `(${column} >= {lo${i}:${type}} AND ${column} < {hi${i}:${type}})`;
  });
  return `(${arms.join(' OR ')})`;
}
