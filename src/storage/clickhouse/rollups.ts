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
  /**
   * Set when the rollup shares its table with the other grains of the same
   * dimensions (020): its rows are those whose `grain` column holds this many
   * seconds, and its bucket column is `t`. Unset: the table is the rollup's
   * alone, and its bucket column is named by its grain (GRAIN).
   */
  grain?: number;
  dims: readonly RollupDim[];
  /** The aggregates it stores, by name: all of ROLLUP_METRICS, unless a test stands in an older release's shape. */
  metrics?: readonly string[];
}

/** An aggregate function of the `quantiles` family and its parameters, for the latency percentiles. */
export interface LatencyState {
  fn: string;
  params: string;
}

/**
 * The latency state every rollup keeps, read as p50, p95 and p99: ClickHouse's `quantiles`, a reservoir of up to
 * 8,192 samples (exact and interpolated below that). Why not another state (a t-digest, a DDSketch), with the
 * figures of each: docs/analytics.md, "The latency states as the log count grows".
 */
export const LATENCY_STATE: LatencyState = { fn: 'quantiles', params: '0.5, 0.95, 0.99' };

/** A latency function with a combinator: `latencyFunction('Merge')` is `quantilesMerge(0.5, 0.95, 0.99)`. */
export const latencyFunction = (combinator: '' | 'State' | 'Merge' | 'MergeState', state: LatencyState = LATENCY_STATE): string =>
  `${state.fn}${combinator}(${state.params})`;

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

/** The grains a shared table holds (020), finest first, with each bucket's expression over raw `created_at`. */
const GRAINS = [
  { name: 'second', seconds: 1, expr: "toDateTime(toStartOfSecond(created_at), 'UTC')" },
  { name: 'minute', seconds: 60, expr: 'toStartOfMinute(created_at)' },
  { name: 'hour', seconds: 3600, expr: 'toStartOfHour(created_at)' },
  { name: 'day', seconds: 86_400, expr: 'toStartOfDay(created_at)' },
] as const;

/**
 * One rollup per grain, all in `table` (bucket column `t`, rows told apart by `grain`) and all written by one view
 * (createMvSql): an insert writes one part to the table, not one per grain.
 */
const everyGrain = (table: string, dims: readonly RollupDim[]): Rollup[] =>
  GRAINS.map((g) => ({ table, mv: `${table}_mv`, grain: g.seconds, bucket: { column: 't', expr: g.expr }, dims }));

export const ROLLUPS: readonly Rollup[] = [
  // Minutes per master (no key: a key sends far less than a request a minute, so key_id kept one row per log).
  {
    table: 'logs_minute',
    mv: 'logs_minute_mv',
    bucket: { column: 'minute', expr: 'toStartOfMinute(created_at)' },
    dims: [DIM.master_id, DIM.model, DIM.group, DIM.status_code],
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
  // Day rollups without key_id: ~24x fewer rows than the hourly ones (logs_hourly keeps one row per key, model and hour).
  {
    table: 'logs_daily',
    mv: 'logs_daily_mv',
    bucket: { column: 'day', expr: 'toStartOfDay(created_at)' },
    dims: [DIM.master_id, DIM.model, DIM.group, DIM.status_code],
  },
  // Everything by model, and everything at all, at every grain, each in one table (020): an unfiltered read takes
  // its days, hours, minutes and edge seconds from one table instead of four, and a chDB read's cost is mostly
  // per table opened and per range (docs/analytics.md, "One table for every grain").
  ...everyGrain('logs_model_grains', [DIM.model]),
  ...everyGrain('logs_total_grains', []),
];

/** The records the logs list's errors only shows: an error status, or an error message under any status. */
export const ERROR_RECORD = "(status_code >= 400 OR error_message != '')";

/**
 * Aggregates every rollup stores; read them back with sum() and latencyFunction('Merge').
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
  ['latency_q', `${latencyFunction('State')}(latency_ms)`],
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
  return [...(r.grain === undefined ? [] : ['grain']), r.bucket.column, ...r.dims.map((d) => d.name), ...metricsOf(r).map(([name]) => name)];
}

/** The rollup's aggregation over `logs`, optionally restricted by `where`. */
export function rollupSelect(r: Rollup, where?: string): string {
  return rollupSelectFrom(r, null, where);
}

/** Seconds a bucket column spans (the bucket columns of the rollups with a table of their own are named by their grain). */
export const GRAIN: Readonly<Record<string, number>> = { second: 1, minute: 60, hour: 3600, day: 86_400 };

/** A rollup's name in reports: its table, with the grain where the table holds several (`logs_model_grains@60`). */
export const rollupName = (r: Rollup): string => (r.grain === undefined ? r.table : `${r.table}@${r.grain}`);

/** Seconds a rollup's bucket spans. */
export const grainOf = (r: Rollup): number => r.grain ?? GRAIN[r.bucket.column]!;

/** The condition that picks a rollup's rows out of a table it shares with other grains; null when the table is its own. */
export const rowsOf = (r: Rollup): string | null => (r.grain === undefined ? null : `grain = ${r.grain}`);

/** Conditions joined by AND, the rollup's own rows first; null when there are none. */
export function rollupWhere(r: Rollup, ...conds: Array<string | null | undefined>): string | null {
  const all = [rowsOf(r), ...conds].filter((c): c is string => !!c);
  return all.length ? all.join(' AND ') : null;
}

/**
 * The rollup's aggregation, from raw `logs` (source null) or re-aggregated from
 * another rollup `source` whose dimensions include its own and whose grain
 * divides its own (the latency states merged into states again), optionally
 * restricted by `where` (over the source's columns).
 */
export function rollupSelectFrom(r: Rollup, source: Rollup | null, where?: string): string {
  // From a source of the same grain the bucket is the source's own (toStartOfSecond takes no DateTime).
  const bucket = !source ? r.bucket.expr : grainOf(source) === grainOf(r) ? source.bucket.column : r.bucket.expr.replaceAll('created_at', source.bucket.column);
  const keys = [...(r.grain === undefined ? [] : [`${r.grain} AS grain`]), aliased(bucket, r.bucket.column), ...dimKeys(r, source)];
  const metrics = source
    ? metricsOf(r).map(([name]) => (name === 'latency_q' ? `${latencyFunction('MergeState')}(latency_q) AS latency_q` : `sum(${name}) AS ${name}`))
    : rawMetrics(r);
  // A source sharing its table with other grains is narrowed in a subquery: this SELECT's aliases (`grain`, `t`)
  // would shadow its columns in a WHERE beside them.
  const sourceWhere = source ? rollupWhere(source, where) : null;
  const from = !source ? 'logs' : source.grain === undefined ? source.table : `(SELECT * FROM ${source.table} WHERE ${sourceWhere})`;
  const filter = !source ? where : source.grain === undefined ? sourceWhere : null;
  return aggregateSql([...keys, ...metrics], from, filter ?? null, groupKeys(r));
}

/** `expr AS name`, or the bare name when the expression is the column itself. */
const aliased = (expr: string, name: string) => (expr === name ? name : `${expr} AS ${name}`);
/** The rollup's dimension columns, from raw `logs` (source null) or from a rollup holding them by name. */
const dimKeys = (r: Rollup, source: Rollup | null) => r.dims.map((d) => aliased(source ? d.name : d.map(ident(d.from)), d.name));
/** The rollup's aggregates over raw `logs`. */
const rawMetrics = (r: Rollup) => metricsOf(r).map(([name, expr]) => `${expr} AS ${name}`);
/** What one row of a rollup stands for: its bucket and its dimensions. */
const groupKeys = (r: Rollup) => [r.bucket.column, ...r.dims.map((d) => d.name)];

function aggregateSql(columns: readonly string[], from: string, where: string | null, groupBy: readonly string[]): string {
  return ['SELECT', columns.map((c) => `  ${c}`).join(',\n'), `FROM ${from}`, ...(where ? [`WHERE ${where}`] : []), `GROUP BY ${groupBy.join(', ')}`].join('\n');
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

/**
 * The view that writes a rollup: its own SELECT, or for the grains that share a view (`grains`, every rollup with
 * this `mv`) one SELECT over all of them (grainsSelect).
 */
export function createMvSql(r: Rollup, grains: readonly Rollup[] = [r]): string {
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${r.mv} TO ${r.table} AS\n${r.grain === undefined ? rollupSelect(r) : grainsSelect(r, grains)}`;
}

/**
 * Every grain of a shared table in one SELECT over raw `logs`: each row counted once per grain (`arrayJoin`) and
 * bucketed by whole multiples of its grain in seconds, which for UTC buckets of a second, minute, hour or day is the
 * start each grain's own expression gives (the checks against raw `logs` compare every grain's rows with that).
 */
function grainsSelect(r: Rollup, grains: readonly Rollup[]): string {
  return aggregateSql(
    [
      `${grainPerRow(grains)} AS grain`,
      `${GRAINS_BUCKET} AS ${r.bucket.column}`,
      ...dimKeys(r, null),
      ...rawMetrics(r),
    ],
    'logs',
    null,
    ['grain', ...groupKeys(r)],
  );
}

/** A shared table's bucket of raw `created_at` at the grain in the column (or alias) `grain`. */
const GRAINS_BUCKET = "toDateTime(intDiv(toUnixTimestamp(created_at), grain) * grain, 'UTC')";

/** Each raw row once per grain of a shared table, as the value of `grain` that GRAINS_BUCKET reads. */
const grainPerRow = (grains: readonly Rollup[]): string => `arrayJoin([${grains.map((g) => g.grain).join(', ')}])`;

/**
 * Backfills a rollup's table from `logs` (TRUNCATE first, so a rerun after a failure heals). Without insert
 * deduplication: the table keeps block ids (migration 009), and a rerun's blocks equal the first run's.
 */
export function backfillSql(r: Rollup): string[] {
  // A table shared by grains loses only this grain's rows.
  const clear = r.grain === undefined ? `TRUNCATE TABLE ${r.table}` : `DELETE FROM ${r.table} WHERE ${rowsOf(r)}`;
  return [clear, rebuildInsertSql(r, rollupSelect(r))];
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
 * Per rollup table, a DELETE of each row that could hold a log of the slice
 * (bucket starting before `before`; the slice's filters where the rollup has a
 * dimension derived from that column), then per rollup an INSERT that
 * re-aggregates exactly those rows from raw `logs`. `deleting`: the slice is
 * still in `logs` and about to go, so its rows are left out, and a rollup
 * without one of the slice's filtered columns (a global rollup under a
 * master's deletion) is rebuilt only in the buckets that hold the slice's
 * rows, not over its whole history. A table shared by grains gets one DELETE
 * for all of them, its buckets found as `(grain, t)` pairs by one read of the
 * slice: a DELETE is a mutation of every part of the table, each part waiting
 * its turn (~0.13 s a part embedded, docs/analytics.md, "One table for every
 * grain"). Its INSERTs stay one a grain, each filtering raw rows by its own
 * buckets before aggregating: one INSERT for every grain (the view's
 * arrayJoin) multiplied every raw row by four before that filter, 1.8x the
 * time at 20M logs.
 */
function rollupRebuilds(slice: LogsSlice, deleting: boolean): Statement[] {
  const params = sliceParams(slice);
  const tables = new Map<string, Rollup[]>();
  for (const r of ROLLUPS) tables.set(r.table, [...(tables.get(r.table) ?? []), r]);
  return [...tables.values()].flatMap((grains) => {
    const r = grains[0]!;
    const rows = rebuiltBuckets(r, r.grain === undefined ? null : grains, 'rows', slice, deleting);
    return [
      { sql: `DELETE FROM ${r.table} WHERE ${rows}`, params },
      ...grains.map((g) => ({ sql: rebuildInsertSql(g, rollupSelect(g, rebuiltBuckets(g, null, 'logs', slice, deleting))), params })),
    ];
  });
}

/**
 * The condition a rebuild replaces by: over a rollup table's rows (`rows`:
 * the rollup's own, or with `grains` every grain of a shared table at once),
 * or over the raw `logs` that make them again (`logs`, one rollup).
 */
function rebuiltBuckets(r: Rollup, grains: readonly Rollup[] | null, over: 'rows' | 'logs', slice: LogsSlice, deleting: boolean): string {
  const inSlice = sliceWhere(slice).join(' AND ');
  const bucket = over === 'rows' ? r.bucket.column : r.bucket.expr;
  const conds = [...(over === 'rows' && !grains ? [rowsOf(r)] : []), `${bucket} < ${BEFORE}`].filter((c): c is string => !!c);
  let everyFilter = true;
  for (const c of filters(slice)) {
    const dim = r.dims.find((d) => d.from === c);
    if (!dim) {
      everyFilter = false;
      continue;
    }
    conds.push(`${over === 'rows' ? dim.name : dim.map(ident(c))} = ${dim.map(param(c))}`);
  }
  if (deleting) {
    if (!everyFilter) {
      // The buckets holding the slice's rows; for a whole shared table, each grain's.
      const ofSlice = grains ? `${grainPerRow(grains)} AS grain, ${GRAINS_BUCKET}` : r.bucket.expr;
      conds.push(`${grains ? `(grain, ${r.bucket.column})` : bucket} IN (SELECT DISTINCT ${ofSlice} FROM logs WHERE ${inSlice})`);
    }
    if (over === 'logs') conds.push(`NOT (${inSlice})`);
  }
  return conds.join(' AND ');
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
