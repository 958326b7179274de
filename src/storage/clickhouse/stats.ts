/**
 * Statistics read from the rollups of `logs` (never the raw table). A range is
 * cut into whole UTC days, the whole hours outside them and the ragged minutes
 * at either end, read in one query (UNION ALL), so it is exact to the minute
 * whatever rollup serves the bulk: days from `logs_daily_global` (no master or
 * key filter) or `logs_daily` (a master filter, no key filter: the day rollups
 * have no key_id), hours from `logs_hourly_global` / `logs_hourly`, minutes from
 * `logs_minute` (also for minute buckets and realtime windows). Hour buckets
 * never read days, and a key filter never does. All buckets are UTC (the
 * rollup columns are DateTime('UTC')).
 */
import type { ClickHouse, QueryParams } from './client.js';

export type Bucket = 'minute' | 'hour' | 'day' | 'month';

export interface StatsFilter {
  master_id?: number;
  key_id?: number;
  model?: string;
}

/** Unix seconds, since inclusive, until exclusive; resolved to whole minutes (since down, until up). */
export interface TimeRange {
  since: number;
  until: number;
}

export interface StatsQuery {
  range: TimeRange;
  filter?: StatsFilter;
  /** Group by time bucket (its start, Unix seconds); none: one row over the range. */
  bucket?: Bucket;
  byModel?: boolean;
  /** Merge the latency quantile states (the expensive part); off: quantiles are null. */
  quantiles?: boolean;
}

export interface StatsRow {
  /** Bucket start, Unix seconds; null without a bucket. */
  start: number | null;
  model: string | null;
  requests: number;
  errors: number;
  tokens_in: number;
  tokens_out: number;
  latency_sum: number;
  /** p50, p95, p99 in ms; null when not asked for or when there were no requests. */
  quantiles: [number, number, number] | null;
}

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
/**
 * Bounds bind as DateTime parameters, not `toDateTime({x:UInt32})`, which keeps
 * ClickHouse from pruning partitions and parts by them (3x slower reads). The
 * value is spelled out: short numbers such as 0 do not parse as a DateTime.
 */
const TIME = "DateTime('UTC')";
const timeParam = (s: number): string => new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ');
const floorTo = (s: number, step: number): number => Math.floor(s / step) * step;
const ceilTo = (s: number, step: number): number => Math.ceil(s / step) * step;

interface Part {
  table: string;
  column: string;
  from: number;
  to: number;
}

/**
 * The pieces a range is read from, coarsest first: whole days from a daily
 * rollup (when buckets and filter allow it), whole hours outside them from an
 * hourly rollup, the minutes outside those from `logs_minute` (minute buckets:
 * all from it).
 */
export function rangeParts(range: TimeRange, filter: StatsFilter, bucket?: Bucket): Part[] {
  const m1 = floorTo(range.since, MINUTE);
  const m2 = ceilTo(range.until, MINUTE);
  if (m2 <= m1) return [];
  const byKey = filter.key_id !== undefined;
  const byMaster = byKey || filter.master_id !== undefined;
  const levels = [
    ...(bucket !== 'minute' && bucket !== 'hour' && !byKey
      ? [{ step: DAY, table: byMaster ? 'logs_daily' : 'logs_daily_global', column: 'day' }]
      : []),
    ...(bucket !== 'minute' ? [{ step: HOUR, table: byMaster ? 'logs_hourly' : 'logs_hourly_global', column: 'hour' }] : []),
  ];
  const parts: Part[] = [];
  // [lo, hi): what is still to read at the next finer level, on both sides of what coarser levels took.
  let gaps: Array<[number, number]> = [[m1, m2]];
  for (const l of levels) {
    const next: Array<[number, number]> = [];
    for (const [lo, hi] of gaps) {
      const a = ceilTo(lo, l.step);
      const b = floorTo(hi, l.step);
      if (a >= b) {
        next.push([lo, hi]);
        continue;
      }
      parts.push({ table: l.table, column: l.column, from: a, to: b });
      if (lo < a) next.push([lo, a]);
      if (b < hi) next.push([b, hi]);
    }
    gaps = next;
  }
  for (const [lo, hi] of gaps) parts.push({ table: 'logs_minute', column: 'minute', from: lo, to: hi });
  return parts;
}

const bucketExpr: Record<Bucket, string> = {
  minute: 'toUnixTimestamp(t)',
  hour: 'toUnixTimestamp(toStartOfHour(t))',
  day: 'toUnixTimestamp(toStartOfDay(t))',
  month: "toUnixTimestamp(toDateTime(toStartOfMonth(t), 'UTC'))",
};

function partsSql(parts: Part[], filter: StatsFilter, withQ: boolean, params: QueryParams): string {
  const metrics = `requests, errors, tokens_in, tokens_out, latency_sum${withQ ? ', latency_q' : ''}`;
  const conds: string[] = [];
  if (filter.master_id !== undefined) {
    conds.push('master_id = {master_id:UInt64}');
    params.master_id = filter.master_id;
  }
  if (filter.key_id !== undefined) {
    conds.push('key_id = {key_id:UInt64}');
    params.key_id = filter.key_id;
  }
  if (filter.model !== undefined) {
    conds.push('model = {model:String}');
    params.model = filter.model;
  }
  return parts
    .map((p, i) => {
      params[`from${i}`] = timeParam(p.from);
      params[`to${i}`] = timeParam(p.to);
      const where = [
        `${p.column} >= {from${i}:${TIME}}`,
        `${p.column} < {to${i}:${TIME}}`,
        ...conds,
      ].join(' AND ');
      return `SELECT ${p.column} AS t, model, ${metrics} FROM ${p.table} WHERE ${where}`;
    })
    .join('\nUNION ALL\n');
}

interface RawRow {
  start_s?: number;
  m?: string;
  n_req: number;
  n_err: number;
  n_in: number;
  n_out: number;
  n_lat: number;
  qs?: number[];
}

/** Aggregates over the rollups; rows with no requests are not returned (a bucketless query always returns one row). */
export async function queryStats(ch: ClickHouse, q: StatsQuery): Promise<StatsRow[]> {
  const filter = q.filter ?? {};
  const parts = rangeParts(q.range, filter, q.bucket);
  const withQ = q.quantiles === true;
  const empty: StatsRow = { start: null, model: null, requests: 0, errors: 0, tokens_in: 0, tokens_out: 0, latency_sum: 0, quantiles: null };
  if (!parts.length) return q.bucket || q.byModel ? [] : [empty];
  const params: QueryParams = {};
  const source = partsSql(parts, filter, withQ, params);
  // Aliases differ from the source's column names: in ClickHouse an alias shadows the column everywhere.
  const keys = [...(q.bucket ? [`${bucketExpr[q.bucket]} AS start_s`] : []), ...(q.byModel ? ['model AS m'] : [])];
  const select = [
    ...keys,
    'sum(requests) AS n_req',
    'sum(errors) AS n_err',
    'sum(tokens_in) AS n_in',
    'sum(tokens_out) AS n_out',
    'sum(latency_sum) AS n_lat',
    ...(withQ ? ['quantilesMerge(0.5, 0.95, 0.99)(latency_q) AS qs'] : []),
  ];
  const groupBy = [...(q.bucket ? ['start_s'] : []), ...(q.byModel ? ['m'] : [])];
  const sql = [
    `SELECT ${select.join(', ')}`,
    `FROM (\n${source}\n)`,
    ...(groupBy.length ? [`GROUP BY ${groupBy.join(', ')}`, 'HAVING n_req > 0', `ORDER BY ${groupBy.join(', ')}`] : []),
  ].join('\n');
  const rows = await ch.query<RawRow>(sql, params);
  if (!groupBy.length && rows.length === 0) return [empty];
  return rows.map((r) => ({
    start: r.start_s ?? null,
    model: r.m ?? null,
    requests: Number(r.n_req),
    errors: Number(r.n_err),
    tokens_in: Number(r.n_in),
    tokens_out: Number(r.n_out),
    latency_sum: Number(r.n_lat),
    quantiles: withQ && Number(r.n_req) > 0 && r.qs ? [r.qs[0]!, r.qs[1]!, r.qs[2]!] : null,
  }));
}

export interface WindowTotals {
  requests: number;
  errors: number;
  tokens_in: number;
  tokens_out: number;
}

/**
 * Totals of the minute buckets starting at or after each of `starts` (Unix
 * seconds, minute-aligned), in one read of `logs_minute`; optionally one master.
 */
export async function minuteWindows(ch: ClickHouse, starts: number[], masterId?: number): Promise<WindowTotals[]> {
  const params: QueryParams = { oldest: timeParam(Math.min(...starts)) };
  const cols = starts.flatMap((s, i) => {
    params[`s${i}`] = timeParam(s);
    const cond = `minute >= {s${i}:${TIME}}`;
    return [
      `sumIf(requests, ${cond}) AS r${i}`,
      `sumIf(errors, ${cond}) AS e${i}`,
      `sumIf(tokens_in, ${cond}) AS i${i}`,
      `sumIf(tokens_out, ${cond}) AS o${i}`,
    ];
  });
  let where = `minute >= {oldest:${TIME}}`;
  if (masterId !== undefined) {
    where += ' AND master_id = {master_id:UInt64}';
    params.master_id = masterId;
  }
  const [row] = await ch.query<Record<string, number>>(`SELECT ${cols.join(', ')} FROM logs_minute WHERE ${where}`, params);
  return starts.map((_, i) => ({
    requests: Number(row?.[`r${i}`] ?? 0),
    errors: Number(row?.[`e${i}`] ?? 0),
    tokens_in: Number(row?.[`i${i}`] ?? 0),
    tokens_out: Number(row?.[`o${i}`] ?? 0),
  }));
}
