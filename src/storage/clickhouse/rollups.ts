/**
 * The rollups of `logs`. They live in one table, `logs_rollups`, one grain per
 * rollup (a grain is a time bucket and a set of dimensions), filled by one
 * materialized view whose GROUPING SETS compute every grain from an inserted
 * block at once: an insert then writes two parts (raw and rollups) rather than
 * one per rollup, and ClickHouse's insert cost is mostly per part. Each grain is
 * also a plain view named as its rollup (`logs_minute`, ...), which readers use.
 *
 * Everything here comes from one description per rollup: the materialized view
 * and backfill (sql/clickhouse/006_one_rollup_table.sql holds the generated
 * text; a test keeps them equal), the per-grain views, and the statements that
 * rebuild a slice after raw logs were deleted, so the aggregation is written in
 * one place.
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
  /** Its value of `logs_rollups.grain`. */
  grain: string;
  /** The view readers query: the grain's rows, `bucket` under the name below. */
  view: string;
  /** Time bucket column (in the view) and its expression over raw `created_at`. */
  bucket: { column: string; expr: string };
  dims: readonly RollupDim[];
}

/** The table every rollup is stored in, and the materialized view filling it. */
export const ROLLUPS_TABLE = 'logs_rollups';
export const ROLLUPS_MV = 'logs_rollups_mv';

const same = (x: string) => x;
/** `group` is a keyword, so the raw column needs quoting wherever it appears. */
const ident = (c: string) => (c === 'group' ? '`group`' : c);
const DIM = {
  master_id: { name: 'master_id', from: 'master_id', map: same },
  key_id: { name: 'key_id', from: 'key_id', map: same },
  model: { name: 'model', from: 'model', map: same },
  group: { name: '`group`', from: 'group', map: same },
  status_class: { name: 'status_class', from: 'status_code', map: (x) => `intDiv(${x}, 100)` },
} satisfies Record<string, RollupDim>;
/** Every dimension a grain may keep, in `logs_rollups` column order; a grain without one stores its default there. */
const ALL_DIMS: readonly RollupDim[] = Object.values(DIM);

const MINUTE = { column: 'minute', expr: 'toStartOfMinute(created_at)' };
const HOUR = { column: 'hour', expr: 'toStartOfHour(created_at)' };
const DAY = { column: 'day', expr: 'toStartOfDay(created_at)' };
const BUCKETS = [MINUTE, HOUR, DAY];

export const ROLLUPS: readonly Rollup[] = [
  { grain: 'minute', view: 'logs_minute', bucket: MINUTE, dims: [DIM.master_id, DIM.key_id, DIM.model, DIM.group, DIM.status_class] },
  { grain: 'hourly', view: 'logs_hourly', bucket: HOUR, dims: [DIM.master_id, DIM.key_id, DIM.model, DIM.group, DIM.status_class] },
  // The global rollups keep only what unfiltered reads group by (time and model): 005 dropped group and status class.
  { grain: 'hourly_global', view: 'logs_hourly_global', bucket: HOUR, dims: [DIM.model] },
  // Day rollups without key_id: ~24x fewer rows than the hourly ones (logs_hourly keeps one row per key, model and hour).
  { grain: 'daily', view: 'logs_daily', bucket: DAY, dims: [DIM.master_id, DIM.model, DIM.group, DIM.status_class] },
  { grain: 'daily_global', view: 'logs_daily_global', bucket: DAY, dims: [DIM.model] },
  // One row per day: an unfiltered 30-day read by day merges 30 latency states instead of thousands (~10x less work).
  { grain: 'daily_total', view: 'logs_daily_total', bucket: DAY, dims: [] },
];

/** The type of `logs_rollups.grain`. */
export const GRAIN_TYPE = `Enum8(${ROLLUPS.map((r, i) => `'${r.grain}' = ${i + 1}`).join(', ')})`;

/**
 * Aggregates every rollup stores; read them back with sum() and quantilesMerge(0.5, 0.95, 0.99).
 * Some aliases equal raw column names and shadow them, so no other expression may use those columns.
 */
const METRICS = [
  ['requests', 'count()'],
  ['errors', 'countIf(status_code >= 400)'],
  ['tokens_in', 'sum(tokens_in)'],
  ['tokens_out', 'sum(tokens_out)'],
  ['latency_sum', 'sum(latency_ms)'],
  ['latency_q', 'quantilesState(0.5, 0.95, 0.99)(latency_ms)'],
] as const;
/** The raw columns METRICS read. */
const METRIC_INPUTS = ['status_code', 'tokens_in', 'tokens_out', 'latency_ms'];

export const ROLLUP_METRICS: readonly string[] = METRICS.map(([name]) => name);
const metricsSql = METRICS.map(([name, expr]) => `${expr} AS ${name}`);

/** Every column of a rollup's view, in order. */
export function rollupColumns(r: Rollup): string[] {
  return [r.bucket.column, ...r.dims.map((d) => d.name), ...ROLLUP_METRICS];
}

/** Every column of `logs_rollups`, in order. */
export const ROLLUPS_TABLE_COLUMNS: readonly string[] = ['grain', 'bucket', ...ALL_DIMS.map((d) => d.name), ...ROLLUP_METRICS];

const lines = (items: readonly string[]) => items.map((c) => `  ${c}`).join(',\n');

/** A dimension's expression over raw `logs`, aliased to its rollup name when they differ. */
const dimOverLogs = (d: RollupDim) => (d.map(ident(d.from)) === d.name ? d.name : `${d.map(ident(d.from))} AS ${d.name}`);

/** One grain's rows aggregated from `logs` (restricted by `where`), in `logs_rollups` columns: what a rebuild inserts. */
function grainSelect(r: Rollup, where: string): string {
  const keys = [`'${r.grain}' AS grain`, `${r.bucket.expr} AS bucket`, ...r.dims.map(dimOverLogs)];
  return [
    'SELECT',
    lines([...keys, ...metricsSql]),
    'FROM logs',
    `WHERE ${where}`,
    `GROUP BY ${['bucket', ...r.dims.map((d) => d.name)].join(', ')}`,
  ].join('\n');
}

/** The grouping keys of the all-grains select: each bucket and dimension under a `k_` name, so no alias shadows a raw column. */
const key = (name: string) => `k_${name.replaceAll('`', '')}`;
const ALL_KEYS = [...BUCKETS.map((b) => b.column), ...ALL_DIMS.map((d) => d.name)];

/**
 * grouping(ALL_KEYS...) of a grain's grouping set: ClickHouse (like the SQL
 * standard) sets one bit per argument, the first the highest, to 1 when that
 * key is not in the set.
 */
function groupingMask(r: Rollup): number {
  const inSet = new Set([r.bucket.column, ...r.dims.map((d) => d.name)]);
  return ALL_KEYS.reduce((mask, k) => mask * 2 + (inSet.has(k) ? 0 : 1), 0);
}

/** Every grain aggregated from `logs` in one pass (GROUPING SETS), in `logs_rollups` columns: the materialized view and the backfill. */
export function rollupsSelect(): string {
  const grain = `transform(grouping(${ALL_KEYS.map(key).join(', ')}), [${ROLLUPS.map(groupingMask).join(', ')}], [${ROLLUPS.map((r) => `'${r.grain}'`).join(', ')}], '') AS grain`;
  const bucket = `multiIf(${BUCKETS.slice(0, -1).map((b) => `grouping(${key(b.column)}) = 0, ${key(b.column)}`).join(', ')}, ${key(BUCKETS.at(-1)!.column)}) AS bucket`;
  const inner = [
    ...BUCKETS.map((b) => `${b.expr} AS ${key(b.column)}`),
    ...ALL_DIMS.map((d) => `${d.map(ident(d.from))} AS ${key(d.name)}`),
    ...METRIC_INPUTS,
  ];
  return [
    'SELECT',
    lines([grain, bucket, ...ALL_DIMS.map((d) => `${key(d.name)} AS ${d.name}`), ...metricsSql]),
    'FROM (',
    '  SELECT',
    inner.map((c) => `    ${c}`).join(',\n'),
    '  FROM logs',
    ')',
    'GROUP BY GROUPING SETS (',
    ROLLUPS.map((r) => `  (${[r.bucket.column, ...r.dims.map((d) => d.name)].map(key).join(', ')})`).join(',\n'),
    ')',
  ].join('\n');
}

export function createMvSql(): string {
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${ROLLUPS_MV} TO ${ROLLUPS_TABLE} AS\n${rollupsSelect()}`;
}

/** Fills `logs_rollups` from all of `logs` (run on an empty table, before the materialized view exists). */
export function backfillSql(): string {
  return `INSERT INTO ${ROLLUPS_TABLE} (${ROLLUPS_TABLE_COLUMNS.join(', ')})\n${rollupsSelect()}`;
}

/** The grain's view: its rows of `logs_rollups` with the bucket under the rollup's column name and only its dimensions. */
export function createViewSql(r: Rollup): string {
  const cols = [`bucket AS ${r.bucket.column}`, ...r.dims.map((d) => d.name), ...ROLLUP_METRICS];
  return `CREATE VIEW IF NOT EXISTS ${r.view} AS\nSELECT\n${lines(cols)}\nFROM ${ROLLUPS_TABLE}\nWHERE grain = '${r.grain}'`;
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

/** Deletes the slice from raw `logs` (lightweight delete; rows vanish from reads at once). */
export function deleteLogsSql(slice: LogsSlice): Statement {
  const where = [`created_at < ${BEFORE}`, ...filters(slice).map((c) => `${ident(c)} = ${param(c)}`)];
  return { sql: `DELETE FROM logs WHERE ${where.join(' AND ')}`, params: sliceParams(slice) };
}

/**
 * Statements that make every rollup agree with `logs` again after the slice was
 * deleted from it: per grain, drop each row that could have held a deleted log
 * (bucket starting before `before`; the slice's filters where the grain has a
 * dimension derived from that column, else all of it) and re-aggregate exactly
 * those rows from what remains. Run them in order, right after deleteLogsSql;
 * logs inserted meanwhile into a bucket starting before `before` could be
 * counted twice, and readers briefly see the slice empty between the two.
 */
export function rebuildRollupsSql(slice: LogsSlice): Statement[] {
  const params = sliceParams(slice);
  const out: Statement[] = [];
  for (const r of ROLLUPS) {
    const rollupWhere = [`grain = '${r.grain}'`, `bucket < ${BEFORE}`];
    const logsWhere = [`${r.bucket.expr} < ${BEFORE}`];
    for (const c of filters(slice)) {
      const dim = r.dims.find((d) => d.from === c);
      if (!dim) continue;
      rollupWhere.push(`${dim.name} = ${dim.map(param(c))}`);
      logsWhere.push(`${dim.map(ident(c))} = ${dim.map(param(c))}`);
    }
    const columns = ['grain', 'bucket', ...r.dims.map((d) => d.name), ...ROLLUP_METRICS];
    out.push({ sql: `DELETE FROM ${ROLLUPS_TABLE} WHERE ${rollupWhere.join(' AND ')}`, params });
    out.push({ sql: `INSERT INTO ${ROLLUPS_TABLE} (${columns.join(', ')})\n${grainSelect(r, logsWhere.join(' AND '))}`, params });
  }
  return out;
}
