/**
 * Filter choices for the logs views: per dimension (master, key, model, group,
 * status class) the values present in a time window with their request
 * counts, busiest first, read from the rollups. The window is exact to the
 * second: whole days from `logs_daily`, whole hours from `logs_hourly`, whole
 * minutes from `logs_minute`, and only the ragged seconds at either end (under
 * a minute each) from the raw `logs`; the key dimension and a key filter (only
 * `logs_hourly_key` has key_id) read whole hours from that and the rest raw.
 * Each dimension is counted under the filters on the other dimensions, not its
 * own (so choosing a model still lists the other models with their counts);
 * the scope (a tenant's own master id) applies to every dimension.
 */
import type { ClickHouseReader, QueryParams } from './client.js';

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

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
const floorTo = (s: number, step: number): number => Math.floor(s / step) * step;
const ceilTo = (s: number, step: number): number => Math.ceil(s / step) * step;
/** A DateTime or DateTime64 parameter spelled out (a short Unix time such as 5 does not parse as one). */
const timeText = (s: number): string => new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ');

interface Piece {
  table: 'logs_daily' | 'logs_hourly' | 'logs_hourly_key' | 'logs_minute' | 'logs';
  from: number;
  to: number;
}

/**
 * [since, until) cut into whole days, hours, minutes, and raw seconds at the ends, coarsest first; `byKey`: whole
 * hours from the key rollup and everything else raw.
 */
export function facetPieces(since: number, until: number, byKey: boolean): Piece[] {
  const levels: Array<{ step: number; table: Piece['table'] }> = byKey
    ? [{ step: HOUR, table: 'logs_hourly_key' }]
    : [
        { step: DAY, table: 'logs_daily' },
        { step: HOUR, table: 'logs_hourly' },
        { step: MINUTE, table: 'logs_minute' },
      ];
  const out: Piece[] = [];
  let gaps: Array<[number, number]> = since < until ? [[since, until]] : [];
  for (const l of levels) {
    const next: Array<[number, number]> = [];
    for (const [lo, hi] of gaps) {
      const a = ceilTo(lo, l.step);
      const b = floorTo(hi, l.step);
      if (a >= b) {
        next.push([lo, hi]);
        continue;
      }
      out.push({ table: l.table, from: a, to: b });
      if (lo < a) next.push([lo, a]);
      if (b < hi) next.push([b, hi]);
    }
    gaps = next;
  }
  for (const [lo, hi] of gaps) out.push({ table: 'logs', from: lo, to: hi });
  return out;
}

const timeColumn: Record<Piece['table'], string> = {
  logs_daily: 'day', logs_hourly: 'hour', logs_hourly_key: 'hour', logs_minute: 'minute', logs: 'created_at',
};
/** A dimension's expression in a rollup and in the raw table. */
const dimExpr = (d: FacetDimension, raw: boolean): string =>
  d === 'group' ? '`group`' : d === 'status_class' && raw ? 'intDiv(status_code, 100)' : d;
const FILTER_TYPES: Record<keyof FacetFilter, string> = { master_id: 'UInt64', key_id: 'UInt64', model: 'String', group: 'String' };

/** One dimension's counts (all of them when limit is null), busiest first, then by value. */
function dimensionSql(dim: FacetDimension, q: FacetQuery, limit: number | null, params: QueryParams): string {
  const filters = (Object.keys(FILTER_TYPES) as Array<keyof FacetFilter>).filter((f) => q.filter[f] !== undefined && f !== dim);
  for (const f of filters) params[f] = q.filter[f];
  const scoped = q.scope !== undefined;
  if (q.scope) params.scope_master = q.scope.master_id;
  // Only logs_hourly_key has key_id: a key dimension or key filter reads it and raw logs.
  const byKey = dim === 'key_id' || filters.includes('key_id');
  const arms = facetPieces(q.since, q.until, byKey).map((p, i) => {
    const raw = p.table === 'logs';
    const col = timeColumn[p.table];
    const type = raw ? "DateTime64(3, 'UTC')" : "DateTime('UTC')";
    params[`from${i}`] = timeText(p.from);
    params[`to${i}`] = timeText(p.to);
    const where = [
      `${col} >= {from${i}:${type}}`,
      `${col} < {to${i}:${type}}`,
      ...(scoped ? ['master_id = {scope_master:UInt64}'] : []),
      ...filters.map((f) => `${dimExpr(f, raw)} = {${f}:${FILTER_TYPES[f]}}`),
    ];
    return `SELECT ${dimExpr(dim, raw)} AS v, ${raw ? 'count()' : 'sum(requests)'} AS n FROM ${p.table} WHERE ${where.join(' AND ')} GROUP BY v`;
  });
  if (arms.length === 0) return '';
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
      const rows = sql ? await ch.query<{ value: number | string; requests: number }>(sql, params) : [];
      const values = rows.map((r) => ({ value: r.value, requests: Number(r.requests) }));
      if (dim === 'status_class') total = values.reduce((s, r) => s + r.requests, 0);
      const keep = dim === 'status_class' ? values.length : q.limit;
      dims[dim] = { values: values.slice(0, keep), truncated: values.length > keep };
    }),
  );
  return { total, dims };
}
