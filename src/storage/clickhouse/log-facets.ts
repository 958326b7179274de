/**
 * Filter choices for the logs views: per dimension (master, key, model, group,
 * status class) the values present in a time window with their request
 * counts, busiest first, read from the rollups. The window is exact to the
 * second, cut as the logs list's counts cut it (log-counts.ts, rangePieces):
 * whole days, hours and minutes each from the smallest rollup that has the
 * dimension, the filtered ones and the scope's master (the key dimension alone:
 * `logs_daily_key`, a row per key and day; with a model or group filter:
 * `logs_hourly_key` and the minutes raw), and only the ragged seconds at either
 * end (under a minute each) from the raw `logs`.
 * Each dimension is counted under the filters on the other dimensions, not its
 * own (so choosing a model still lists the other models with their counts);
 * the scope (a tenant's own master id) applies to every dimension.
 */
import type { ClickHouseReader, QueryParams } from './client.js';
import { OPEN_END, rangePieces } from './log-counts.js';
import { pieceBounds } from './range-cut.js';

export type FacetDimension = 'master_id' | 'key_id' | 'model' | 'group' | 'status_class';
export const FACET_DIMENSIONS: readonly FacetDimension[] = ['master_id', 'key_id', 'model', 'group', 'status_class'];

export interface FacetFilter {
  master_id?: number;
  key_id?: number;
  model?: string;
  group?: string;
}

export interface FacetQuery {
  /** Unix seconds, inclusive. */
  since: number;
  /** Unix seconds, exclusive. */
  until: number;
  filter: FacetFilter;
  /** Applies to every dimension, its own included (a tenant's records). */
  scope?: { master_id: number };
  /** Values kept per dimension (the busiest); status classes (at most 10) are never cut. */
  limit: number;
}

export interface Facet<V> {
  values: Array<{ value: V; requests: number }>;
  /** True when the dimension had more values than `limit`. */
  truncated: boolean;
}

export interface Facets {
  /** Requests in the window under the whole filter. */
  total: number;
  dims: Record<FacetDimension, Facet<number | string>>;
}

/** A dimension's expression, the same in a rollup and in the raw table (the rollups keep the status code: its class is computed). */
const dimExpr = (d: FacetDimension): string => (d === 'group' ? '`group`' : d === 'status_class' ? 'intDiv(status_code, 100)' : d);
/** The column a dimension is computed from: what a rollup must keep to serve it. */
const dimColumn = (d: FacetDimension): string => (d === 'status_class' ? 'status_code' : d);
const FILTER_TYPES: Record<keyof FacetFilter, string> = { master_id: 'UInt64', key_id: 'UInt64', model: 'String', group: 'String' };

/** One dimension's counts (all of them when limit is null), busiest first, then by value. */
function dimensionSql(dim: FacetDimension, q: FacetQuery, limit: number | null, params: QueryParams): string {
  const filters = (Object.keys(FILTER_TYPES) as Array<keyof FacetFilter>).filter((f) => q.filter[f] !== undefined && f !== dim);
  for (const f of filters) params[f] = q.filter[f];
  const scoped = q.scope !== undefined;
  if (q.scope) params.scope_master = q.scope.master_id;
  // Each bucket size reads the smallest rollup with this dimension, the filtered ones and the scope's master.
  const needs = [...new Set<string>([dimColumn(dim), ...filters, ...(scoped ? ['master_id'] : [])])];
  // The window's open ends (since 0, until the end of log time) bound nothing: no time condition, no raw edges.
  const arms = rangePieces(needs, q.since > 0 ? q.since : null, q.until < OPEN_END ? q.until : null).map((p, i) => {
    const where = [
      ...pieceBounds(p, i, params),
      ...(scoped ? ['master_id = {scope_master:UInt64}'] : []),
      ...filters.map((f) => `${dimExpr(f)} = {${f}:${FILTER_TYPES[f]}}`),
    ];
    return `SELECT ${dimExpr(dim)} AS v, ${p.raw ? 'count()' : 'sum(requests)'} AS n FROM ${p.table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} GROUP BY v`;
  });
  if (arms.length === 0) return "SELECT '' AS value, toUInt64(0) AS requests WHERE 0"; // an empty window
  const value = dim === 'status_class' ? "concat(toString(v), 'xx')" : 'v';
  const cap = limit === null ? '' : ` LIMIT ${limit + 1}`; // one more than kept: tells whether there were more
  return `SELECT ${value} AS value, sum(n) AS requests FROM (\n${arms.join('\nUNION ALL\n')}\n) GROUP BY v ORDER BY requests DESC, v${cap}`;
}

export async function queryFacets(ch: ClickHouseReader, q: FacetQuery): Promise<Facets> {
  const dims = {} as Facets['dims'];
  let total = 0;
  await Promise.all(
    FACET_DIMENSIONS.map(async (dim) => {
      const params: QueryParams = {};
      // Status classes are few (at most 10) and no filter applies to them: read all, and their sum is the total.
      const sql = dimensionSql(dim, q, dim === 'status_class' ? null : q.limit, params);
      const rows = await ch.query<{ value: number | string; requests: number }>(sql, params);
      const values = rows.map((r) => ({ value: r.value, requests: Number(r.requests) }));
      if (dim === 'status_class') total = values.reduce((s, r) => s + r.requests, 0);
      const keep = dim === 'status_class' ? values.length : q.limit;
      dims[dim] = { values: values.slice(0, keep), truncated: values.length > keep };
    }),
  );
  return { total, dims };
}
