/**
 * Filter choices for the logs views (admin: every record; master: its own):
 * per dimension the values present in a window with their request counts,
 * read from the rollups, busiest first and at most `limit` of each.
 */
import { actorRoute, type Route } from '../route.js';
import { analytics } from '../../actors/analytics/handles.js';
import type { JSONSchema } from '../../contract/validate.js';

const int = { type: 'integer' };

const facet = (value: JSONSchema, description: string): JSONSchema => ({
  type: 'object',
  description,
  properties: {
    values: {
      type: 'array',
      items: { type: 'object', properties: { value, requests: int }, required: ['value', 'requests'] },
    },
    truncated: { type: 'boolean', description: 'more values were present than `limit`' },
  },
  required: ['values', 'truncated'],
});

const choices: JSONSchema = {
  type: 'object',
  title: 'LogFilterChoices',
  properties: {
    since: int,
    until: { type: ['integer', 'null'], description: 'null: no upper bound was given' },
    limit: int,
    total: { type: 'integer', description: 'requests in the window under every filter given (equals the logs list total for them)' },
    masters: facet(int, 'master ids'),
    keys: facet(int, 'child key ids'),
    models: facet({ type: 'string' }, 'models'),
    groups: facet({ type: 'string' }, 'provider groups'),
    status_classes: facet({ type: 'string' }, "status classes: '2xx', '4xx', '5xx', ..."),
  },
  required: ['since', 'until', 'limit', 'total', 'masters', 'keys', 'models', 'groups', 'status_classes'],
};

const summary =
  'Values present in the window per dimension (masters, keys, models, groups, status classes) with their request counts, ' +
  "from the rollups, exact to the second; each dimension is counted under the other dimensions' filters, not its own";

const fresh: JSONSchema = {
  type: 'object',
  title: 'LogFreshness',
  properties: {
    newest_record_at: { type: ['string', 'null'], description: 'RFC 3339 creation time of the newest stored record; null when none' },
    checked_at: { type: 'string', description: 'RFC 3339: when this was read (the service clock)' },
    age_ms: { type: ['integer', 'null'], description: 'checked_at minus newest_record_at (0 for records stamped later)' },
  },
  required: ['newest_record_at', 'checked_at', 'age_ms'],
};

export const logFilterRoutes: Route[] = [
  actorRoute(analytics.freshness, {
    method: 'GET', path: '/admin/logs/freshness', role: 'admin', tags: ['logs'],
    summary: 'The newest stored log record: how fresh every chart and list is (records still buffered are not in it)',
    success: { status: 200, schema: fresh },
  }),
  actorRoute(analytics.freshness, {
    method: 'GET', path: '/v1/logs/freshness', role: 'master', tags: ['tenant'],
    summary: "The tenant's newest stored log record",
    success: { status: 200, schema: fresh },
  }),
  actorRoute(analytics.filterChoices, {
    method: 'GET', path: '/admin/logs/filters', role: 'admin', summary, tags: ['logs'],
    success: { status: 200, schema: choices },
  }),
  actorRoute(analytics.tenantFilterChoices, {
    method: 'GET', path: '/v1/logs/filters', role: 'master', tags: ['tenant'],
    summary: "The tenant's own filter choices (as /admin/logs/filters, for its own records only)",
    success: { status: 200, schema: choices },
  }),
];
