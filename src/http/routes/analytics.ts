/**
 * Statistics from the log rollups: grouped stats and traffic charts (admin),
 * the dashboard summary, realtime figures (system, per master, own tenant),
 * the master view with its realtime figures embedded, and tenant stats.
 */
import { actorRoute, type Route } from '../route.js';
import { analytics } from '../../actors/analytics/handles.js';
import type { JSONSchema } from '../../contract/validate.js';
import { masterView } from './tenancy-schemas.js';

const int = { type: 'integer' };
const num = { type: 'number' };
const str = { type: 'string' };
const ok = (schema: JSONSchema) => ({ status: 200, schema });
const obj = (properties: Record<string, JSONSchema>, description?: string): JSONSchema => ({
  type: 'object',
  ...(description ? { description } : {}),
  properties,
  required: Object.keys(properties),
});

/** Said on every statistics read, so that a caller knows both the default window and why a record just posted is missing. */
const statsWindow =
  'Without since/until the window is the last 24 hours (the last 6 hours for minute buckets). ' +
  'Records appear once the log writer has flushed them, up to SVC_LOG_FLUSH_MS (default 1 s) after their 202.';

/** Cost and unpriced records, in every statistics answer (decisions.md, "Money"; unit: docs/spend.md). */
const money = {
  cost: { type: 'number', description: 'sum of the records\' cost in the service\'s currency unit, exact, rounded to 12 decimal places' },
  unpriced: { type: 'integer', description: 'records whose model had no price (their cost counts as 0)' },
};

const figures = {
  requests: int,
  errors: { type: 'integer', description: 'records with status >= 400' },
  error_rate: { type: 'number', description: 'errors / requests, 4 decimals; 0 without requests' },
  tokens_in: int,
  tokens_out: int,
  tokens: { type: 'integer', description: 'tokens_in + tokens_out' },
  ...money,
  avg_latency_ms: num,
};
const percentiles = { p50_latency_ms: num, p95_latency_ms: num, p99_latency_ms: num };

const groupKeys = {
  key: { type: 'string', description: 'model name; UTC date (day), YYYY-MM (month) or RFC 3339 bucket start (hour, minute)' },
  start: { type: ['integer', 'null'], description: 'bucket start in Unix seconds (UTC); null for model groups' },
  ...figures,
};
export const groupedStatsItem: JSONSchema = {
  ...obj({ ...groupKeys, ...percentiles }),
  // Left out when asked with percentiles=false (GET /admin/logs/stats).
  required: Object.keys(groupKeys),
  title: 'GroupedStatsItem',
};

const groupedStatsResponse: JSONSchema = {
  ...obj({
    group_by: { type: 'string', enum: ['model', 'day', 'month', 'hour', 'minute'] },
    since: int,
    until: int,
    items: { type: 'array', items: groupedStatsItem },
  }),
  title: 'GroupedStatsResponse',
};

const trafficChart: JSONSchema = obj({
  granularity: { type: 'string', enum: ['hour', 'minute'] },
  metric: { type: 'string', enum: ['requests', 'tokens', 'cost'] },
  since: int,
  until: int,
  top_n: int,
  x: { type: 'array', items: int, description: 'bucket starts (Unix seconds, UTC), every bucket of the range' },
  series: {
    type: 'array',
    description: 'the top_n models by total, then `other` (all remaining models summed) when there are any',
    items: obj({
      name: str,
      total: { type: 'number', description: 'an integer for requests and tokens; cost rounded to 12 decimal places' },
      data: { type: 'array', items: num, description: 'aligned with x, zero-filled' },
    }),
  },
});

const trend = obj({
  value: num,
  previous: { type: ['number', 'null'] },
  delta_percent: { type: ['number', 'null'] },
  direction: { type: 'string', enum: ['up', 'down', 'flat', 'new'] },
});
const trendKeys = ['requests', 'errors', 'tokens', 'cost', 'error_rate', 'avg_latency_ms'];

const summary: JSONSchema = {
  type: 'object',
  properties: {
    period: { type: 'string', enum: ['today', 'last7d', 'last30d', 'all'] },
    since: int,
    until: int,
    ...figures,
    masters: { type: 'integer', description: 'live masters' },
    keys: { type: 'integer', description: 'unrevoked child keys of live masters' },
    upstream_keys: { type: 'integer', description: 'upstream keys not deleted' },
    previous: { type: ['object', 'null'], properties: { since: int, until: int }, description: 'with include_trends: the compared range' },
    trends: {
      type: ['object', 'null'],
      description: 'with include_trends; null for period=all (no previous period)',
      properties: Object.fromEntries(trendKeys.map((k) => [k, trend])),
    },
  },
  required: ['period', 'since', 'until', ...Object.keys(figures), 'masters', 'keys', 'upstream_keys'],
};

const window = obj({
  since: { type: 'integer', description: 'window start, Unix seconds' },
  seconds: { type: 'integer', description: 'window length up to `at` (whole seconds)' },
  requests: int,
  errors: int,
  tokens_in: int,
  tokens_out: int,
  tokens: int,
  ...money,
  qps: num,
});
const realtimeProps = { at: int, last_minute: window, last_5_minutes: window };
const rateLimit = obj({
  limit: { type: 'integer', description: 'the master\'s global_qps; 0 = unlimited' },
  current_qps: num,
  utilization: { type: 'number', description: 'current_qps / limit; 0 when unlimited' },
  limited: { type: 'boolean', description: 'limit > 0 and current_qps >= limit' },
});
const systemRealtime = obj(realtimeProps);
const masterRealtime = obj({ ...realtimeProps, rate_limit: rateLimit });

const tenantStats = obj({
  period: { type: 'string', enum: ['today', 'last7d', 'last30d'] },
  since: int,
  until: int,
  totals: obj(figures),
  by_model: { type: 'array', items: groupedStatsItem },
  by_day: { type: 'array', items: groupedStatsItem },
});

const masterWithRealtime: JSONSchema = {
  ...masterView,
  properties: { ...(masterView.properties as object), realtime: masterRealtime },
};

const statsTags = ['logs'];

export const analyticsRoutes: Route[] = [
  actorRoute(analytics.stats, {
    method: 'GET', path: '/admin/logs/stats', role: 'admin', tags: statsTags,
    summary: 'Requests, errors, tokens and latency (average, p50/p95/p99) per model or UTC time bucket; minute ranges at most 6 h',
    description: statsWindow,
    success: ok(groupedStatsResponse),
  }),
  actorRoute(analytics.trafficChart, {
    method: 'GET', path: '/admin/logs/stats/traffic-chart', role: 'admin', tags: statsTags,
    summary: 'Per-model series on a shared zero-filled UTC time axis; models beyond top_n summed into `other`',
    description: statsWindow,
    success: ok(trafficChart),
  }),
  actorRoute(analytics.summary, {
    method: 'GET', path: '/admin/dashboard/summary', role: 'admin', tags: ['dashboard'],
    summary: 'Requests, tokens, latency, error rate and entity counts for a period; optional trends against the previous period',
    success: ok(summary),
  }),
  actorRoute(analytics.realtime, {
    method: 'GET', path: '/admin/realtime', role: 'admin', tags: ['dashboard'],
    summary: 'System-wide requests, tokens and QPS over the last minute and the last 5 minutes',
    success: ok(systemRealtime),
  }),
  actorRoute(analytics.masterDetail, {
    method: 'GET', path: '/admin/masters/{id}', role: 'admin', tags: ['masters'],
    summary: 'Read a master, with its realtime figures embedded',
    success: ok(masterWithRealtime),
  }),
  actorRoute(analytics.masterRealtime, {
    method: 'GET', path: '/admin/masters/{id}/realtime', role: 'admin', tags: ['masters'],
    summary: "A master's requests, tokens, QPS and rate-limit status against its global_qps",
    success: ok(masterRealtime),
  }),
  actorRoute(analytics.tenantRealtime, {
    method: 'GET', path: '/v1/realtime', role: 'master', tags: ['tenant'],
    summary: 'Own requests, tokens, QPS and rate-limit status',
    success: ok(masterRealtime),
  }),
  actorRoute(analytics.tenantStats, {
    method: 'GET', path: '/v1/stats', role: 'master', tags: ['tenant'],
    summary: 'Own usage for a period: totals, by model and by UTC day',
    success: ok(tenantStats),
  }),
];
