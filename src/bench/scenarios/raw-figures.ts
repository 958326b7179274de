/**
 * The raw `logs` table's figures for the dashboards bench's answer check
 * (dashboard-calls.ts), from two sources that must agree:
 * - `directSource`: one GROUP BY query per range, the plainest statement of
 *   what an answer must be. At 200M rows a query over the whole history takes
 *   seconds, so the bench times it on a sample of answers only.
 * - `batchedSource`: every range of one call answered from a few queries. The
 *   raw table is summed per hour over the window the ranges span, per minute
 *   inside the hours that hold a range's end, and per second inside the
 *   minutes that hold one; a range is then the sum of its whole hours, the
 *   whole minutes at its edges and the seconds at its edges. This is how the
 *   bench checks every answer it timed (issue 25, item 2) in minutes at 200M
 *   rows instead of hours.
 * Groups are keyed `<bucket start>|<model>` (either part absent when the
 * request does not group by it; '' for a total).
 */
import type { ClickHouse } from '../../storage/clickhouse/client.js';
import { moneyNumber, parseMoney } from '../../storage/clickhouse/decimal.js';

export interface Figures {
  requests: number;
  errors: number;
  tokens_in: number;
  tokens_out: number;
  cost: number;
}

/** Figures with the cost also kept exactly (picodollars), for sums of many groups. */
export type RawFigures = Figures & { pico: bigint };

export interface Grouping {
  /** Group by the bucket a record's second falls in. */
  time?: 'minute' | 'hour' | 'day' | 'month';
  byModel?: boolean;
}

/** The records of [since, until) (Unix seconds), of one master or all, grouped. */
export interface RawRequest {
  since: number;
  until: number;
  group: Grouping;
  master?: number;
}

export interface RawSource {
  figures: (r: RawRequest) => Promise<Map<string, RawFigures>>;
}

const HOUR = 3600;
const DAY = 86_400;

/** The start of the bucket holding second `t`, as the service and ClickHouse compute it (UTC). */
function bucketStart(t: number, time: NonNullable<Grouping['time']>): number {
  if (time === 'month') {
    const d = new Date(t * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  }
  const size = time === 'minute' ? 60 : time === 'hour' ? HOUR : DAY;
  return Math.floor(t / size) * size;
}

const groupKey = (g: Grouping, t: number, model: string): string =>
  [...(g.time ? [String(bucketStart(t, g.time))] : []), ...(g.byModel ? [model] : [])].join('|');

const FIGURES_SQL = `count() AS n, countIf(status_code >= 400) AS e, sum(tokens_in) AS ti, sum(tokens_out) AS tout, toString(sum(cost)) AS c`;
type FigureRow = { n: number | string; e: number | string; ti: number | string; tout: number | string; c: string };

const toFigures = (r: FigureRow): RawFigures => {
  const pico = parseMoney(r.c);
  return { requests: Number(r.n), errors: Number(r.e), tokens_in: Number(r.ti), tokens_out: Number(r.tout), cost: moneyNumber(pico), pico };
};

function add(into: Map<string, RawFigures>, key: string, f: RawFigures): void {
  const had = into.get(key);
  if (!had) {
    into.set(key, { ...f });
    return;
  }
  had.requests += f.requests;
  had.errors += f.errors;
  had.tokens_in += f.tokens_in;
  had.tokens_out += f.tokens_out;
  had.pico += f.pico;
  had.cost = moneyNumber(had.pico);
}

const masterSql = (master?: number): string => (master === undefined ? '' : ` AND master_id = ${Math.trunc(master)}`);
const timeSql = (t: number): string => `toDateTime64(${Math.trunc(t)}, 3, 'UTC')`;

/** One GROUP BY over the raw table per request. */
export function directSource(ch: ClickHouse): RawSource {
  return {
    figures: async ({ since, until, group, master }) => {
      const time = group.time && {
        minute: 'toUnixTimestamp(toStartOfMinute(created_at))',
        hour: 'toUnixTimestamp(toStartOfHour(created_at))',
        day: 'toUnixTimestamp(toStartOfDay(created_at))',
        month: "toUnixTimestamp(toDateTime(toStartOfMonth(created_at), 'UTC'))",
      }[group.time];
      const parts = [...(time ? [`toString(${time})`] : []), ...(group.byModel ? ['model'] : [])];
      const key = parts.length === 0 ? "''" : parts.length === 1 ? parts[0] : `concat(${parts.join(", '|', ")})`;
      const rows = await ch.query<FigureRow & { k: string }>(
        `SELECT ${key} AS k, ${FIGURES_SQL} FROM logs
         WHERE created_at >= ${timeSql(since)} AND created_at < ${timeSql(until)}${masterSql(master)} GROUP BY k`,
      );
      return new Map(rows.map((r) => [r.k, toFigures(r)]));
    },
  };
}

/** A source that answers nothing and notes what it was asked: the first pass of a batched check. */
export function recordingSource(): RawSource & { asked: RawRequest[] } {
  const asked: RawRequest[] = [];
  return { asked, figures: async (r) => (asked.push(r), new Map()) };
}

/** One grain's sums: unit starts ascending, and per unit its figures by model. */
interface Level {
  grain: number;
  starts: number[];
  cells: Array<Array<[string, RawFigures]>>;
  /** Units of the next coarser grain this level covers (undefined: the whole window). */
  covers?: Set<number>;
}

/** The sums behind every request that share a master and a finest bucket. */
class Sums {
  constructor(
    private readonly levels: Level[],
    private readonly window: { lo: number; hi: number },
  ) {}

  figures(r: RawRequest): Map<string, RawFigures> {
    if (r.since < this.window.lo || r.until > this.window.hi) throw new Error(`raw figures: [${r.since}, ${r.until}) outside the window summed`);
    const out = new Map<string, RawFigures>();
    if (r.since < r.until) this.sum(r.since, r.until, 0, r.group, out);
    return out;
  }

  /** [s, u) as whole units of level i, and the parts at either edge from the finer levels. */
  private sum(s: number, u: number, i: number, g: Grouping, out: Map<string, RawFigures>): void {
    const { grain } = this.levels[i]!;
    if (i === this.levels.length - 1) return this.units(i, s, u, g, out);
    const a = Math.ceil(s / grain) * grain;
    const b = Math.floor(u / grain) * grain;
    if (a >= b) return this.sum(s, u, i + 1, g, out);
    this.units(i, a, b, g, out);
    if (s < a) this.sum(s, a, i + 1, g, out);
    if (b < u) this.sum(b, u, i + 1, g, out);
  }

  private units(i: number, x: number, y: number, g: Grouping, out: Map<string, RawFigures>): void {
    const level = this.levels[i]!;
    if (level.covers) {
      // A finer level holds only the coarser units where some range ends: anything else is a mistake here, not a zero.
      const coarse = this.levels[i - 1]!.grain;
      for (const unit of [Math.floor(x / coarse), Math.floor((y - 1) / coarse)]) {
        if (!level.covers.has(unit)) throw new Error(`raw figures: ${level.grain} s sums do not cover [${x}, ${y})`);
      }
    }
    let lo = 0;
    let hi = level.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (level.starts[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < level.starts.length && level.starts[k]! < y; k++) {
      for (const [model, f] of level.cells[k]!) add(out, groupKey(g, level.starts[k]!, model), f);
    }
  }
}

/**
 * A source for exactly the requests given (a recordingSource's `asked`): per
 * master and finest bucket, the window they span is summed per hour (per
 * minute when a request groups by minute), then per minute and per second
 * where a range ends. Asked anything else, it throws.
 */
export async function batchedSource(ch: ClickHouse, requests: RawRequest[]): Promise<RawSource> {
  const groups = new Map<string, RawRequest[]>();
  const idOf = (r: RawRequest) => `${r.master ?? ''}|${r.group.time === 'minute' ? 'minute' : 'hour'}`;
  for (const r of requests) {
    if (!Number.isInteger(r.since) || !Number.isInteger(r.until)) throw new Error(`raw figures: whole seconds only (${r.since}, ${r.until})`);
    const id = idOf(r);
    const same = groups.get(id);
    if (same) same.push(r);
    else groups.set(id, [r]);
  }
  const sums = new Map<string, Sums>();
  for (const [id, rs] of groups) {
    const master = rs[0]!.master;
    const grains = rs[0]!.group.time === 'minute' ? [60, 1] : [HOUR, 60, 1];
    const lo = Math.min(...rs.map((r) => r.since));
    const hi = Math.max(...rs.map((r) => r.until));
    const levels: Level[] = [];
    for (const [i, grain] of grains.entries()) {
      const coarse = grains[i - 1];
      const covers = coarse === undefined ? undefined : new Set(rs.flatMap((r) => [r.since, r.until - 1, r.until].map((t) => Math.floor(t / coarse))));
      const only = covers ? ` AND intDiv(toUnixTimestamp64Milli(created_at), ${coarse! * 1000}) IN (${[...covers].join(',')})` : '';
      const rows = await ch.query<FigureRow & { t: number | string; m: string }>(
        `SELECT intDiv(toUnixTimestamp64Milli(created_at), ${grain * 1000}) * ${grain} AS t, model AS m, ${FIGURES_SQL} FROM logs
         WHERE created_at >= ${timeSql(Math.floor(lo / grains[0]!) * grains[0]!)} AND created_at < ${timeSql(Math.ceil(hi / grains[0]!) * grains[0]!)}${masterSql(master)}${only}
         GROUP BY t, m ORDER BY t`,
      );
      const level: Level = { grain, starts: [], cells: [], covers };
      for (const row of rows) {
        const t = Number(row.t);
        if (level.starts[level.starts.length - 1] !== t) {
          level.starts.push(t);
          level.cells.push([]);
        }
        level.cells[level.cells.length - 1]!.push([row.m, toFigures(row)]);
      }
      levels.push(level);
    }
    sums.set(id, new Sums(levels, { lo, hi }));
  }
  return {
    figures: async (r) => {
      const s = sums.get(idOf(r));
      if (!s) throw new Error(`raw figures: a request the batch was not built for (${JSON.stringify(r)})`);
      return s.figures(r);
    },
  };
}
