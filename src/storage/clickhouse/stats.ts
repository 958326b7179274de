/**
 * Statistics over `logs`, exact to the second at both ends of a range. A range
 * is cut into whole UTC days, the whole hours outside them, the whole minutes
 * outside those and the partial minutes at either end, read in one query
 * (one table itself, or a UNION ALL of one SELECT per table: sourceOf), each
 * piece from the smallest rollup that has the dimensions the
 * read filters and groups by (docs/analytics.md, "Rollups"):
 * - no master or key filter: every piece from one table holding every grain,
 *   `logs_total_grains` (not by model) or `logs_model_grains` (by model or a
 *   model filter), its days, hours, minutes (up to TOTAL_EDGE_MINUTES or
 *   EDGE_MINUTES of them with the seconds) and seconds told apart by the
 *   `grain` column (020);
 * - a master filter: `logs_daily`, `logs_hourly`, and `logs_minute` for
 *   minute buckets over more than MASTER_EDGE_MINUTES (else the raw table);
 * - a key filter: no days (no day rollup has key_id), hours from
 *   `logs_hourly_key`, and everything finer from the raw table, whose sort key
 *   (master, key, time) reads just that key's records;
 * and the partial minutes (under a minute at each end) from that table's
 * seconds without a master or key filter, else from the raw `logs`
 * table (aggregated into the rollups' shape), whose sort key reads just that
 * master or key. Hour buckets never read days.
 * All buckets are UTC (the rollup columns are DateTime('UTC')). Cost comes
 * back exact (Decimal(38, 12) as 10^-12 units; decimal.ts).
 */
import type { ClickHouseReader as Reader, QueryParams } from './client.js';
import { latencyFunction, rawAggregates } from './rollups.js';
import { parseMoney } from './decimal.js';
import { derived } from './derived.js';
import { cutRange, DAY, HOUR, MINUTE, joinAdjacent, pieceBounds, secondsLiteral, timeParam, type CutLevel, type RangePiece } from './range-cut.js';

export type Bucket = 'minute' | 'hour' | 'day' | 'month';

export interface StatsFilter {
  master_id?: number;
  key_id?: number;
  model?: string;
}

/** Unix seconds, since inclusive, until exclusive, exact to the second (a record's created_at is what is compared). */
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
  /** Sum of the records' cost in 10^-12 currency units (exact). */
  cost: bigint;
  /** Records that had no price (their cost is 0). */
  unpriced: number;
  latency_sum: number;
  /** p50, p95, p99 in ms (LATENCY_STATE); null when not asked for or when there were no requests. */
  quantiles: [number, number, number] | null;
}

/**
 * Raw created_at binds as DateTime64(3); a rollup's time is compared with
 * number literals (range-cut.ts, pieceBounds, secondsLiteral). Never
 * `toDateTime({x:UInt32})`, which keeps ClickHouse from pruning partitions and
 * parts (3x slower reads).
 */
const RAW_TIME = "DateTime64(3, 'UTC')";

/** A piece of a range with both ends bound. */
export type Part = RangePiece<number>;

/** The raw table, read for the partial minutes at the ends of a range. */
export const RAW_TABLE = 'logs';

/** A part's time condition, its bounds bound as `from<n>` and `to<n>` in `params`. */
export function partSpan(part: Part, n: number, params: QueryParams): string {
  return `(${pieceBounds(part, n, params).join(' AND ')})`;
}

/**
 * A range holding at most this many whole minutes outside its whole hours and
 * days reads them with its partial minutes, from the seconds rollup, rather
 * than reading the minute rows too: a realtime window read from one table
 * instead of two took 9 ms instead of 15 (docs/analytics.md, "The partial
 * minutes"); in the one grains table it saves a range. More would read up to
 * 2,400 seconds rows a minute by model.
 */
export const EDGE_MINUTES = 10;
/**
 * The same for one master, whose partial minutes come from raw `logs`: that
 * read opens the master's granules of the day anyway, so its whole minutes
 * cost rows to aggregate, not a table; two hours covers the minutes on both
 * sides of a range's whole hours (a master's 24 hours by model: 38-47 ms ->
 * 27-35 ms at 20M logs).
 */
export const MASTER_EDGE_MINUTES = 120;
/**
 * The same for unfiltered totals (not by model): `logs_total_grains` holds at
 * most one seconds row a second, so two hours of seconds are at most 7,200
 * rows, and reading them in the seconds' range saves a range of minutes at
 * every end of a period.
 */
export const TOTAL_EDGE_MINUTES = 120;

/**
 * The pieces a range is read from, coarsest first (range-cut.ts): whole days
 * from a daily rollup (when buckets and filter allow it), whole hours outside
 * them from an hourly rollup, whole minutes outside those from a minute rollup
 * (minute buckets: all whole minutes from it), and the seconds before the first
 * whole minute and from the last one on from the seconds of the grains table (no
 * master or key filter) or raw `logs`, which also read the whole minutes when there are
 * few (EDGE_MINUTES, TOTAL_EDGE_MINUTES, MASTER_EDGE_MINUTES) and, for a key, all of them. The
 * pieces do not overlap and together cover [since, until) exactly.
 */
export function rangeParts(range: TimeRange, filter: StatsFilter, bucket?: Bucket, byModel = false): Part[] {
  const byKey = filter.key_id !== undefined;
  const byMaster = byKey || filter.master_id !== undefined;
  // Seconds: unfiltered from their rollup (raw `logs` would open a whole day partition), a master's or key's from `logs`.
  // Unfiltered: every grain from one table (by model when grouped or filtered by it), rows told apart by `grain`.
  const grains = byModel || filter.model !== undefined ? 'logs_model_grains' : 'logs_total_grains';
  const level = (step: number, own: { table: string; column: string }): CutLevel =>
    byMaster ? { step, ...own } : { step, table: grains, column: 't', shared: true };
  const edgeOf = byMaster ? { table: RAW_TABLE, column: 'created_at', raw: true } : { table: grains, column: 't', grain: 1, raw: false };
  const levels: CutLevel[] = [
    ...(bucket !== 'minute' && bucket !== 'hour' && !byKey ? [level(DAY, { table: 'logs_daily', column: 'day' })] : []),
    ...(bucket !== 'minute' ? [level(HOUR, { table: byKey ? 'logs_hourly_key' : 'logs_hourly', column: 'hour' })] : []),
    {
      ...level(MINUTE, { table: 'logs_minute', column: 'minute' }),
      // No minute rollup has key_id: a key's whole minutes, however many, are read from raw `logs` with its edges.
      finerUpTo: byKey ? Infinity : byMaster ? MASTER_EDGE_MINUTES : grains === 'logs_total_grains' ? TOTAL_EDGE_MINUTES : EDGE_MINUTES,
    },
  ];
  return cutRange(range.since, range.until, levels, (from, to) => ({ ...edgeOf, from, to }));
}

const bucketExpr: Record<Bucket, string> = {
  minute: 'toUnixTimestamp(toStartOfMinute(t))',
  hour: 'toUnixTimestamp(toStartOfHour(t))',
  day: 'toUnixTimestamp(toStartOfDay(t))',
  month: "toUnixTimestamp(toDateTime(toStartOfMonth(t), 'UTC'))",
};

/** Which rollup levels a set of groupings may read: the finest bucket among them decides. */
const FINENESS: Array<Bucket | undefined> = ['minute', 'hour', 'day', 'month', undefined];
const finest = (sets: Grouping[]): Bucket | undefined =>
  FINENESS[Math.min(...sets.map((g) => FINENESS.indexOf(g.bucket)))];

/** The ranges as given, a later range starting where an earlier one overlaps it (the shared seconds count for the later). */
function resolveRanges(ranges: TimeRange[]): TimeRange[] {
  const out = ranges.map((r) => ({ since: r.since, until: r.until }));
  const order = out.map((_, i) => i).sort((a, b) => out[a]!.since - out[b]!.since);
  for (let k = 1; k < order.length; k++) {
    const prev = out[order[k - 1]!]!;
    const cur = out[order[k]!]!;
    if (prev.until > cur.since) prev.until = Math.max(prev.since, cur.since);
  }
  return out;
}

/** The rollups' sums the statistics read (not `error_records`: errors only is a logs list filter). */
const STATS_SUMS = ['requests', 'errors', 'tokens_in', 'tokens_out', 'cost', 'unpriced', 'latency_sum'] as const;

/** A read's FROM clause, and with several periods the expression of `p`, the index of the period a row falls in. */
interface Source {
  from: string;
  /** `p` itself (a column of the subquery), or `multiIf(…) AS p` to select beside the keys; '' with one period. */
  period: string;
}

/**
 * Where a read's rows come from: one SELECT per table (whatever number of
 * pieces and periods it serves, their ranges ORed), so each table is opened
 * once. One rollup table whose time column is `t` (an unfiltered read: a
 * grains table) is read directly, without a subquery that only renames its
 * columns: the engine plans a read with one query level fewer for ~1 ms less
 * CPU (docs/analytics.md, "One query level").
 */
function sourceOf(
  ranges: TimeRange[],
  filter: StatsFilter,
  levels: { bucket?: Bucket; byModel: boolean },
  withQ: boolean,
  params: QueryParams,
): Source | null {
  // `model` only when grouped by it (the *_total rollups have none; a model filter never reads them).
  const read: readonly string[] = withQ ? [...STATS_SUMS, 'latency_q'] : STATS_SUMS;
  const metrics = `${levels.byModel ? 'model, ' : ''}${read.join(', ')}`;
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
  const tables = new Map<string, { column: string; spans: string[] }>();
  let n = 0;
  // Pieces of adjacent periods that meet are read as one range (the period of a row comes from its time, below).
  for (const part of joinAdjacent(ranges.flatMap((range) => rangeParts(range, filter, levels.bucket, levels.byModel)))) {
    let t = tables.get(part.table);
    if (!t) tables.set(part.table, (t = { column: part.column, spans: [] }));
    t.spans.push(partSpan(part, n++, params));
  }
  if (tables.size === 0) return null;
  /** Which period a row falls in, by its time column (`t` of a rollup, exact `created_at` of a raw row). */
  const periodOf = (column: string, raw: boolean): string => {
    if (ranges.length <= 1) return '';
    // Latest start first: a row belongs to the last period starting at or before it (the periods do not overlap).
    const order = ranges.map((_, i) => i).sort((a, b) => ranges[b]!.since - ranges[a]!.since);
    const arms = order.map((i) => {
      const since = ranges[i]!.since;
      if (!raw) return `${column} >= ${secondsLiteral(since)}, ${i}`;
      params[`rp${i}`] = timeParam(since);
      return `${column} >= {rp${i}:${RAW_TIME}}, ${i}`;
    });
    return `multiIf(${arms.join(', ')}, 0) AS p`;
  };
  const whereOf = (spans: string[]): string => [spans.length > 1 ? `(${spans.join(' OR ')})` : spans[0]!, ...conds].join(' AND ');
  if (tables.size === 1) {
    const [[table, { column, spans }]] = tables;
    if (table !== RAW_TABLE && column === 't') return { from: `${table} WHERE ${whereOf(spans)}`, period: periodOf('t', false) };
  }
  const selects = [...tables].map(([table, { column, spans }]) => {
    const period = periodOf(table === RAW_TABLE ? 'created_at' : 't', table === RAW_TABLE);
    if (table === RAW_TABLE) {
      // Partial minutes: raw rows aggregated by minute into the rollups' shape (finer buckets are never asked for).
      const keys = ['t', ...(levels.byModel ? ['model'] : []), ...(ranges.length > 1 ? ['p'] : [])];
      const cols = [`toStartOfMinute(created_at) AS t`, ...(levels.byModel ? ['model'] : []), ...rawAggregates(read), ...(period ? [period] : [])];
      return `SELECT ${cols.join(', ')} FROM ${table} WHERE ${whereOf(spans)} GROUP BY ${keys.join(', ')}`;
    }
    return `SELECT ${column} AS t, ${metrics}${period ? `, ${period}` : ''} FROM ${table} WHERE ${whereOf(spans)}`;
  });
  return { from: `(\n${selects.join('\nUNION ALL\n')}\n)`, period: ranges.length > 1 ? 'p' : '' };
}

interface RawRow {
  start_s?: number;
  m?: string;
  p?: number;
  g_s?: number;
  g_m?: number;
  n_req: number;
  n_err: number;
  n_in: number;
  n_out: number;
  n_cost: string;
  n_unp: number;
  n_lat: number;
  qs?: number[];
}

/** How rows are grouped: by time bucket (its start), by model, both, or neither (totals). */
export interface Grouping {
  bucket?: Bucket;
  byModel?: boolean;
}

interface Aggregation {
  /** Non-overlapping periods once resolved to minutes (an overlap is clipped off the earlier one). */
  ranges: TimeRange[];
  filter?: StatsFilter;
  /** Several groupings are read in one pass (GROUPING SETS). */
  sets: Grouping[];
  quantiles?: boolean;
}

export const emptyRow = (): StatsRow => ({
  start: null, model: null, requests: 0, errors: 0, tokens_in: 0, tokens_out: 0, cost: 0n, unpriced: 0, latency_sum: 0, quantiles: null,
});

/** rows[period][set]: the groups with requests, in bucket and model order; a totals set always has its one row. */
async function aggregate(ch: Reader, q: Aggregation): Promise<StatsRow[][][]> {
  const filter = q.filter ?? {};
  const withQ = q.quantiles === true;
  const ranges = resolveRanges(q.ranges);
  const empty = (): StatsRow[][][] => ranges.map(() => q.sets.map((g) => (g.bucket || g.byModel ? [] : [emptyRow()])));
  const params: QueryParams = {};
  const useBucket = q.sets.find((g) => g.bucket)?.bucket;
  if (q.sets.some((g) => g.bucket && g.bucket !== useBucket)) throw new Error('groupings of one read share one bucket size');
  const useModel = q.sets.some((g) => g.byModel);
  const source = sourceOf(ranges, filter, { bucket: finest(q.sets), byModel: useModel }, withQ, params);
  if (!source) return empty();
  const multi = ranges.length > 1;
  // Aliases differ from the source's column names: in ClickHouse an alias shadows the column everywhere.
  const keyOf = (g: Grouping): string[] => [...(multi ? ['p'] : []), ...(g.bucket ? ['start_s'] : []), ...(g.byModel ? ['m'] : [])];
  const keys = [...(useBucket ? [`${bucketExpr[useBucket]} AS start_s`] : []), ...(useModel ? ['model AS m'] : []), ...(multi ? [source.period] : [])];
  const grouped = q.sets.length > 1 ? keys.length > 0 : keyOf(q.sets[0]!).length > 0;
  const markers = q.sets.length > 1 ? [...(useBucket ? ['grouping(start_s) AS g_s'] : []), ...(useModel ? ['grouping(m) AS g_m'] : [])] : [];
  const select = [
    ...keys,
    ...markers,
    'sum(requests) AS n_req',
    'sum(errors) AS n_err',
    'sum(tokens_in) AS n_in',
    'sum(tokens_out) AS n_out',
    'toString(sum(cost)) AS n_cost',
    'sum(unpriced) AS n_unp',
    'sum(latency_sum) AS n_lat',
    ...(withQ ? [`${latencyFunction('Merge')}(latency_q) AS qs`] : []),
  ];
  const groupBy =
    q.sets.length > 1 ? `GROUPING SETS (${q.sets.map((g) => `(${keyOf(g).join(', ')})`).join(', ')})` : keyOf(q.sets[0]!).join(', ');
  const order = [...(multi ? ['p'] : []), ...(useBucket ? ['start_s'] : []), ...(useModel ? ['m'] : [])];
  const sql = [
    `SELECT ${select.join(', ')}`,
    `FROM ${source.from}`,
    ...(grouped ? [`GROUP BY ${groupBy}`, 'HAVING n_req > 0', `ORDER BY ${order.join(', ')}`] : []),
  ].join('\n');
  const rows = await ch.query<RawRow>(sql, params);
  // A cached read's rows are shaped once (derived.ts); the key holds what shapes them besides their SQL.
  const shape = `aggregate/${ranges.length}/${q.sets.map((g) => `${g.bucket ?? ''}.${g.byModel ? 1 : 0}`).join(',')}/${withQ ? 1 : 0}`;
  return derived(rows, shape, () => rowsOf(rows, q.sets, multi, withQ, empty()));
}

/** ClickHouse's rows as `out[period][set]` (aggregate). */
function rowsOf(rows: RawRow[], sets: Grouping[], multi: boolean, withQ: boolean, out: StatsRow[][][]): StatsRow[][][] {
  for (const r of rows) {
    const set =
      sets.length > 1
        ? sets.findIndex((g) => !!g.bucket === (r.g_s === 0) && !!g.byModel === (r.g_m === 0))
        : 0;
    const row: StatsRow = {
      start: sets[set]!.bucket ? (r.start_s ?? null) : null,
      model: sets[set]!.byModel ? (r.m ?? null) : null,
      requests: Number(r.n_req),
      errors: Number(r.n_err),
      tokens_in: Number(r.n_in),
      tokens_out: Number(r.n_out),
      cost: parseMoney(r.n_cost),
      unpriced: Number(r.n_unp),
      latency_sum: Number(r.n_lat),
      quantiles: withQ && Number(r.n_req) > 0 && r.qs ? [r.qs[0]!, r.qs[1]!, r.qs[2]!] : null,
    };
    const slot = out[multi ? Number(r.p) : 0]![set]!;
    if (sets[set]!.bucket || sets[set]!.byModel) slot.push(row);
    else slot[0] = row;
  }
  return out;
}

/** Aggregates over the rollups; rows with no requests are not returned (a bucketless query always returns one row). */
export async function queryStats(ch: Reader, q: StatsQuery): Promise<StatsRow[]> {
  const [[rows]] = (await aggregate(ch, { ranges: [q.range], filter: q.filter, sets: [q], quantiles: q.quantiles })) as [[StatsRow[]]];
  return rows;
}

/** Several groupings of one range in a single read (e.g. by model and by day), in the order asked. */
export async function queryGroupings(
  ch: Reader,
  q: Omit<StatsQuery, keyof Grouping> & { sets: Grouping[] },
): Promise<StatsRow[][]> {
  const [sets] = (await aggregate(ch, { ranges: [q.range], filter: q.filter, sets: q.sets, quantiles: q.quantiles })) as [StatsRow[][]];
  return sets;
}

/**
 * The totals of several periods in a single read, one row each, exact to the
 * second; where two overlap, the shared seconds count for the later one.
 */
export async function queryPeriodTotals(ch: Reader, ranges: TimeRange[], filter?: StatsFilter): Promise<StatsRow[]> {
  const rows = await aggregate(ch, { ranges, filter, sets: [{}] });
  return rows.map(([[total]]) => total!);
}

/**
 * One model's values per time bucket, as parallel arrays in no particular
 * order (empty buckets absent). Values are ClickHouse's decimal text, exact for
 * a cost (Decimal(38, 12)) and a count alike: the reader parses them as its
 * metric needs (src/actors/analytics/chart.ts).
 */
export interface ModelSeries {
  model: string;
  total: string;
  starts: number[];
  values: string[];
}

export type SeriesMetric = 'requests' | 'tokens' | 'cost';

/**
 * Per-model series of requests, tokens (in + out) or cost by minute or hour bucket.
 * The rows are folded into one array pair per model in
 * ClickHouse: a week of hours × 40 models comes back as 40 rows, not 6,720
 * objects to parse. A model appears when it had requests in the range; models
 * come in no particular order.
 */
export async function querySeries(
  ch: Reader,
  q: { range: TimeRange; filter?: StatsFilter; bucket: 'minute' | 'hour'; metric: SeriesMetric },
): Promise<ModelSeries[]> {
  const params: QueryParams = {};
  const [range] = resolveRanges([q.range]);
  const source = sourceOf([range!], q.filter ?? {}, { bucket: q.bucket, byModel: true }, false, params);
  if (!source) return [];
  const value = q.metric === 'tokens' ? 'sum(tokens_in) + sum(tokens_out)' : q.metric === 'cost' ? 'sum(cost)' : 'sum(requests)';
  // Aliases differ from the source's column names: in ClickHouse an alias shadows the column everywhere.
  const sql = [
    // Values as text: a cost is Decimal(38, 12), exact only as text; counts parse the same way.
    'SELECT m, toString(sum(v)) AS total, groupArray(start_s) AS starts, arrayMap(x -> toString(x), groupArray(v)) AS vals',
    `FROM (\nSELECT ${bucketExpr[q.bucket]} AS start_s, model AS m, ${value} AS v`,
    `FROM ${source.from}`,
    'GROUP BY start_s, m',
    'HAVING sum(requests) > 0)',
    'GROUP BY m',
  ].join('\n');
  const rows = await ch.query<{ m: string; total: string; starts: number[]; vals: string[] }>(sql, params);
  // Derived once per cached read, so the chart's own derivation has the same array to key on each time.
  return derived(rows, 'series', () => rows.map((r) => ({ model: r.m, total: r.total, starts: r.starts.map(Number), values: r.vals })));
}
