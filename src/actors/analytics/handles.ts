/**
 * The analytics messages that routes reach (statistics, the dashboard,
 * realtime figures, the logs views' filter choices and freshness), with the
 * schemas of what each receives. Plain data: the HTTP layer imports this
 * module without the actor's code or its stores.
 */
import { handles } from '../../contract/handle.js';
import { idParam } from '../../contract/params.js';
import { unixTime } from '../../contract/value-rules.js';

const rangeQuery = {
  since: unixTime('Unix seconds, inclusive, exact to the second; default: until minus 24 hours (6 hours for minute buckets)'),
  until: unixTime('Unix seconds, exclusive, exact to the second; must be after since; default: now'),
} as const;
export const filters = {
  master_id: { type: 'integer', minimum: 1 },
  key_id: { type: 'integer', minimum: 1 },
  model: { type: 'string', minLength: 1, maxLength: 200 },
} as const;

const unix = <const D extends string>(description: D) => ({ type: 'integer', minimum: 0, maximum: 4102444800, description }) as const;
const choiceFilters = {
  key_id: { type: 'integer', minimum: 0 },
  model: { type: 'string', maxLength: 200 },
  group: { type: 'string', maxLength: 200 },
  limit: { type: 'integer', minimum: 1, default: 20, description: 'values kept per dimension, the busiest; at most 100' },
} as const;
const since = unix('Unix seconds, inclusive; default: the beginning');
const until = unix('Unix seconds, exclusive; default: no bound');

export const analytics = handles('analytics', {
  stats: {
    query: {
      type: 'object',
      properties: {
        ...rangeQuery,
        group_by: { type: 'string', enum: ['model', 'day', 'month', 'hour', 'minute'], default: 'model' },
        percentiles: {
          type: 'boolean',
          default: true,
          description: 'false: the items leave out p50/p95/p99_latency_ms, whose merge is about half of a cold read over many buckets',
        },
        ...filters,
      },
    },
  },
  trafficChart: {
    query: {
      type: 'object',
      properties: {
        ...rangeQuery,
        granularity: { type: 'string', enum: ['hour', 'minute'], default: 'hour', description: 'minute: range at most 6 h; hour: at most 31 days' },
        top_n: { type: 'integer', minimum: 1, maximum: 20, default: 5 },
        metric: { type: 'string', enum: ['requests', 'tokens', 'cost'], default: 'requests', description: 'cost: sum of the records\' cost' },
        master_id: filters.master_id,
        key_id: filters.key_id,
      },
    },
  },
  summary: {
    query: {
      type: 'object',
      properties: {
        period: { type: 'string', enum: ['today', 'last7d', 'last30d', 'all'], default: 'today' },
        include_trends: { type: 'boolean', default: false },
      },
    },
  },
  realtime: {},
  masterDetail: { params: idParam },
  masterRealtime: { params: idParam },
  tenantRealtime: {},
  tenantStats: { query: { type: 'object', properties: { period: { type: 'string', enum: ['today', 'last7d', 'last30d'], default: 'today' } } } },
  freshness: {},
  /** The admin's filter choices, over every master or one. */
  filterChoices: { query: { type: 'object', properties: { since, until, master_id: { type: 'integer', minimum: 0 }, ...choiceFilters } } },
  /** A tenant's filter choices, over its own records. */
  tenantFilterChoices: { query: { type: 'object', properties: { since, until, ...choiceFilters } } },
});
