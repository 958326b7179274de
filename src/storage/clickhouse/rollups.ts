/**
 * The rollups of `logs`: one description per rollup, from which come its
 * materialized view (the only source of the views in force: the SQL migrations
 * create the tables, and ensureRollupViews creates each missing view after
 * backfilling its table), and the statements that rebuild a slice of it after
 * raw logs were deleted, so the aggregation is written in one place.
 * Grains and dimensions follow the readers and a gateway's cardinalities (many
 * sparse keys; few dense masters and models): no minute rollup holds key_id, and
 * only logs_hourly_key and logs_daily_key do (docs/analytics.md, "Rollups").
 */
import type { QueryParams } from './client.js';

/** Raw `logs` columns a deletion may filter on by equality, with their bind types. */
const FILTER_TYPES = {
  master_id: 'UInt64',
  key_id: 'UInt64',
  model: 'String',
  group: 'String',
  status_code: 'UInt16',
} as const;
type FilterColumn = keyof typeof FILTER_TYPES;

/** A rollup column holding `map(raw column)`; filters on the raw column carry over through `map`. */
export interface RollupDim {
  name: string;
  from: FilterColumn;
  map: (x: string) => string;
}

export interface Rollup {
  table: string;
  mv: string;
  /** Time bucket column and its expression over raw `created_at`. */
  bucket: { column: string; expr: string };
  dims: readonly RollupDim[];
  /** The aggregates it stores, by name: all of ROLLUP_METRICS, unless a test stands in an older release's shape. */
  metrics?: readonly string[];
}

const same = (x: string) => x;
/** `group` is a keyword, so the raw column needs quoting wherever it appears. */
const ident = (c: string) => (c === 'group' ? '`group`' : c);
const DIM = {
  master_id: { name: 'master_id', from: 'master_id', map: same },
  key_id: { name: 'key_id', from: 'key_id', map: same },
  model: { name: 'model', from: 'model', map: same },
  group: { name: '`group`', from: 'group', map: same },
  // The code, not its class: a list filtered by an exact code counts from the rollups (014); the class is intDiv(status_code, 100).
  status_code: { name: 'status_code', from: 'status_code', map: same },
} satisfies Record<string, RollupDim>;

export const ROLLUPS: readonly Rollup[] = [
  // Minutes per master (no key: a key sends far less than a request a minute, so key_id kept one row per log).
  {
    table: 'logs_minute',
    mv: 'logs_minute_mv',
    bucket: { column: 'minute', expr: 'toStartOfMinute(created_at)' },
    dims: [DIM.master_id, DIM.model, DIM.group, DIM.status_code],
  },
  // Seconds of everything by model: an unfiltered read's partial minutes at its ends (raw `logs` would open a whole day).
  {
    table: 'logs_second_global',
    mv: 'logs_second_global_mv',
    bucket: { column: 'second', expr: "toDateTime(toStartOfSecond(created_at), 'UTC')" },
    dims: [DIM.model],
  },
  // Minutes of everything by model: unfiltered reads open at most (models x minutes) rows, whatever the log count.
  {
    table: 'logs_minute_global',
    mv: 'logs_minute_global_mv',
    bucket: { column: 'minute', expr: 'toStartOfMinute(created_at)' },
    dims: [DIM.model],
  },
  {
    table: 'logs_hourly',
    mv: 'logs_hourly_mv',
    bucket: { column: 'hour', expr: 'toStartOfHour(created_at)' },
    dims: [DIM.master_id, DIM.model, DIM.group, DIM.status_code],
  },
  // Hours by the list's filters other than master and key, every master together (017): a model, group or status
  // code without a master over whole hours and days opens a bounded number of rows, where the master-sorted
  // rollups open every master's.
  {
    table: 'logs_hourly_filters',
    mv: 'logs_hourly_filters_mv',
    bucket: { column: 'hour', expr: 'toStartOfHour(created_at)' },
    dims: [DIM.model, DIM.group, DIM.status_code],
  },
  // The only rollup with key_id, read only by a key filter or the key facet (sorted by master and key, so such a read opens that key's rows).
  {
    table: 'logs_hourly_key',
    mv: 'logs_hourly_key_mv',
    bucket: { column: 'hour', expr: 'toStartOfHour(created_at)' },
    dims: [DIM.master_id, DIM.key_id, DIM.model, DIM.group, DIM.status_code],
  },
  // Days per key and nothing else: the key facet and a key filter's whole days, a row per key and day whatever the log count.
  {
    table: 'logs_daily_key',
    mv: 'logs_daily_key_mv',
    bucket: { column: 'day', expr: 'toStartOfDay(created_at)' },
    dims: [DIM.master_id, DIM.key_id],
  },
  // The global rollups keep only what unfiltered reads group by (time and model): 005 dropped group and status class.
  {
    table: 'logs_hourly_global',
    mv: 'logs_hourly_global_mv',
    bucket: { column: 'hour', expr: 'toStartOfHour(created_at)' },
    dims: [DIM.model],
  },
  // One row per hour (019): the whole hours of unfiltered reads not by model merge one latency state an hour, not one
  // per model (stats by day over 30 days: the ~1,440 hour states of its ragged ends were most of its cost).
  {
    table: 'logs_hourly_total',
    mv: 'logs_hourly_total_mv',
    bucket: { column: 'hour', expr: 'toStartOfHour(created_at)' },
    dims: [],
  },
  // Day rollups without key_id: ~24x fewer rows than the hourly ones (logs_hourly keeps one row per key, model and hour).
  {
    table: 'logs_daily',
    mv: 'logs_daily_mv',
    bucket: { column: 'day', expr: 'toStartOfDay(created_at)' },
    dims: [DIM.master_id, DIM.model, DIM.group, DIM.status_code],
  },
  {
    table: 'logs_daily_global',
    mv: 'logs_daily_global_mv',
    bucket: { column: 'day', expr: 'toStartOfDay(created_at)' },
    dims: [DIM.model],
  },
  // One row per day: an unfiltered 30-day read by day merges 30 latency states instead of thousands (~10x less work).
  {
    table: 'logs_daily_total',
    mv: 'logs_daily_total_mv',
    bucket: { column: 'day', expr: 'toStartOfDay(created_at)' },
    dims: [],
  },
];

/** The records the logs list's errors only shows: an error status, or an error message under any status. */
export const ERROR_RECORD = "(status_code >= 400 OR error_message != '')";

/**
 * Aggregates every rollup stores; read them back with sum() and quantilesMerge(0.5, 0.95, 0.99).
 * Some aliases equal raw column names and shadow them, so no other expression may use those columns.
 * `errors` (status >= 400) is what the statistics count; `error_records` what errors only lists (015).
 */
const METRICS = [
  ['requests', 'count()'],
  ['errors', 'countIf(status_code >= 400)'],
  ['error_records', `countIf${ERROR_RECORD}`],
  ['tokens_in', 'sum(tokens_in)'],
  ['tokens_out', 'sum(tokens_out)'],
  ['cost', 'sum(cost)'],
  ['unpriced', 'sum(unpriced)'],
  ['latency_sum', 'sum(latency_ms)'],
  ['latency_q', 'quantilesState(0.5, 0.95, 0.99)(latency_ms)'],
] as const;

export const ROLLUP_METRICS: readonly string[] = METRICS.map(([name]) => name);
/** The aggregates that are plain sums (all but the latency quantile state): comparable as values. */
export const ROLLUP_SUMS: readonly string[] = ROLLUP_METRICS.filter((name) => name !== 'latency_q');

/**
 * The named aggregates over raw `logs` rows, as `expr AS name`, in the order
 * asked (the statistics' second-precise range edges are read this way, in the
 * rollups' own shape).
 */
export function rawAggregates(names: readonly string[]): string[] {
  return names.map((name) => {
    const metric = METRICS.find(([n]) => n === name);
    if (!metric) throw new Error(`no rollup aggregate named ${name}`);
    return `${metric[1]} AS ${name}`;
  });
}

/** The aggregates a rollup stores, as [name, expression over raw logs]. */
const metricsOf = (r: Rollup) => (r.metrics ? METRICS.filter(([name]) => r.metrics!.includes(name)) : METRICS);

/** Every column of a rollup, in table order. */
export function rollupColumns(r: Rollup): string[] {
  return [r.bucket.column, ...r.dims.map((d) => d.name), ...metricsOf(r).map(([name]) => name)];
}

/** The rollup's aggregation over `logs`, optionally restricted by `where`. */
export function rollupSelect(r: Rollup, where?: string): string {
  return rollupSelectFrom(r, null, where);
}

/** Seconds a bucket column spans (the rollups' bucket columns are named by their grain). */
export const GRAIN: Readonly<Record<string, number>> = { second: 1, minute: 60, hour: 3600, day: 86_400 };

/**
 * The rollup's aggregation, from raw `logs` (source null) or re-aggregated from
 * another rollup `source` whose dimensions include its own and whose grain
 * divides its own (the latency states merged into states again), optionally
 * restricted by `where` (over the source's columns).
 */
export function rollupSelectFrom(r: Rollup, source: Rollup | null, where?: string): string {
  const bucket = source ? r.bucket.expr.replaceAll('created_at', source.bucket.column) : r.bucket.expr;
  const dim = (d: RollupDim) => (source ? d.name : d.map(ident(d.from)));
  const keys = [`${bucket} AS ${r.bucket.column}`, ...r.dims.map((d) => (dim(d) === d.name ? d.name : `${dim(d)} AS ${d.name}`))];
  const metrics = source
    ? metricsOf(r).map(([name]) => (name === 'latency_q' ? `quantilesMergeState(0.5, 0.95, 0.99)(latency_q) AS latency_q` : `sum(${name}) AS ${name}`))
    : metricsOf(r).map(([name, expr]) => `${expr} AS ${name}`);
  return [
    'SELECT',
    [...keys, ...metrics].map((c) => `  ${c}`).join(',\n'),
    `FROM ${source ? source.table : 'logs'}`,
    ...(where ? [`WHERE ${where}`] : []),
    `GROUP BY ${[r.bucket.column, ...r.dims.map((d) => d.name)].join(', ')}`,
  ].join('\n');
}

/**
 * An INSERT of re-aggregated rows into a rollup (backfill, rebuilds, repair): never deduplicated (a rebuilt block
 * may equal one written before: sql/clickhouse/009_insert_dedup.sql), and free to touch any number of day
 * partitions at once (the rows of an INSERT ... SELECT come in no time order, so a block over a history of more
 * than 100 days would be refused by max_partitions_per_insert_block).
 */
export function rebuildInsertSql(r: Rollup, select: string): string {
  return `INSERT INTO ${r.table} (${rollupColumns(r).join(', ')}) SETTINGS insert_deduplicate = 0, max_partitions_per_insert_block = 0\n${select}`;
}

export function createMvSql(r: Rollup): string {
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${r.mv} TO ${r.table} AS\n${rollupSelect(r)}`;
}

/**
 * Backfills a rollup's table from `logs` (TRUNCATE first, so a rerun after a failure heals). Without insert
 * deduplication: the table keeps block ids (migration 009), and a rerun's blocks equal the first run's.
 */
export function backfillSql(r: Rollup): string[] {
  return [`TRUNCATE TABLE ${r.table}`, rebuildInsertSql(r, rollupSelect(r))];
}

/** Which raw logs a deletion removes: everything before `before`, narrowed by equalities. */
export interface LogsSlice {
  /** Exclusive upper bound on created_at (a Date binds as an exact instant, whatever the server's zone). */
  before: Date;
  master_id?: number | bigint;
  key_id?: number | bigint;
  model?: string;
  group?: string;
  status_code?: number;
}

export interface Statement {
  sql: string;
  params: QueryParams;
}

const BEFORE = "{before:DateTime64(3, 'UTC')}";

function filters(slice: LogsSlice): FilterColumn[] {
  return (Object.keys(FILTER_TYPES) as FilterColumn[]).filter((c) => slice[c] !== undefined);
}

const param = (c: FilterColumn) => `{${c}:${FILTER_TYPES[c]}}`;

function sliceParams(slice: LogsSlice): QueryParams {
  const params: QueryParams = { before: slice.before };
  for (const c of filters(slice)) params[c] = slice[c];
  return params;
}

/** The slice's rows of raw `logs`, as conditions. */
function sliceWhere(slice: LogsSlice): string[] {
  return [`created_at < ${BEFORE}`, ...filters(slice).map((c) => `${ident(c)} = ${param(c)}`)];
}

/** The slice's rows of raw `logs`, as one condition and its parameters. */
export function logsSliceCondition(slice: LogsSlice): Statement {
  return { sql: sliceWhere(slice).join(' AND '), params: sliceParams(slice) };
}

/**
 * Deletes the slice from raw `logs` (lightweight delete; rows vanish from reads
 * at once). The parts it touches lose their `by_time` projection until merged
 * (migration 016): a projection cannot hide deleted rows.
 */
function deleteLogsSql(slice: LogsSlice): Statement {
  const { sql, params } = logsSliceCondition(slice);
  return { sql: `DELETE FROM logs WHERE ${sql}`, params };
}

/**
 * Per rollup, a DELETE of each row that could hold a log of the slice (bucket
 * starting before `before`; the slice's filters where the rollup has a
 * dimension derived from that column) and an INSERT that re-aggregates exactly
 * those rows from raw `logs`. `deleting`: the slice is still in `logs` and about
 * to go, so its rows are left out, and a rollup without one of the slice's
 * filtered columns (a global rollup under a master's deletion) is rebuilt only
 * in the buckets that hold the slice's rows, not over its whole history.
 */
function rollupRebuilds(slice: LogsSlice, deleting: boolean): Statement[] {
  const params = sliceParams(slice);
  const inSlice = sliceWhere(slice).join(' AND ');
  const out: Statement[] = [];
  for (const r of ROLLUPS) {
    const rollupWhere = [`${r.bucket.column} < ${BEFORE}`];
    const logsWhere = [`${r.bucket.expr} < ${BEFORE}`];
    let everyFilter = true;
    for (const c of filters(slice)) {
      const dim = r.dims.find((d) => d.from === c);
      if (!dim) {
        everyFilter = false;
        continue;
      }
      rollupWhere.push(`${dim.name} = ${dim.map(param(c))}`);
      logsWhere.push(`${dim.map(ident(c))} = ${dim.map(param(c))}`);
    }
    if (deleting) {
      if (!everyFilter) {
        const touched = `(SELECT DISTINCT ${r.bucket.expr} FROM logs WHERE ${inSlice})`;
        rollupWhere.push(`${r.bucket.column} IN ${touched}`);
        logsWhere.push(`${r.bucket.expr} IN ${touched}`);
      }
      logsWhere.push(`NOT (${inSlice})`);
    }
    out.push({ sql: `DELETE FROM ${r.table} WHERE ${rollupWhere.join(' AND ')}`, params });
    out.push({ sql: rebuildInsertSql(r, rollupSelect(r, logsWhere.join(' AND '))), params });
  }
  return out;
}

/**
 * Statements that make every rollup agree with `logs` again after the slice
 * changed in place (a mutation, which the views do not see: spend.ts's
 * repricing). Run them in order; logs inserted meanwhile into a bucket starting
 * before `before` could be counted twice.
 */
export function rebuildRollupsSql(slice: LogsSlice): Statement[] {
  return rollupRebuilds(slice, false);
}

/**
 * The deletion of a slice, in order: every rollup rebuilt without the slice's
 * rows while they are still in `logs` (so the buckets they touched can be found
 * from them), then the raw delete. Cut short anywhere, running it again heals:
 * the slice is still in `logs` until the last statement, and every rebuild
 * recomputes its rows. Readers briefly see the rollups without the slice and
 * the raw table with it; logs inserted meanwhile into a bucket starting before
 * `before` could be counted twice.
 */
export function deleteSliceSql(slice: LogsSlice): Statement[] {
  return [...rollupRebuilds(slice, true), deleteLogsSql(slice)];
}
