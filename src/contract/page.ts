/**
 * Pagination, one rule for every list: `page` from 1, `limit` 50 by default and
 * at most 200 (decisions.md). The query and reply schemas for the route table,
 * and the clamp the domains apply.
 */
import type { JSONSchema } from './validate.js';

/** The page query with a route's own filters; a literal type, so a handler's query type is read from it. */
export const pageQuery = <const E extends Record<string, object> = {}>(extra?: E) =>
  ({
    type: 'object',
    properties: {
      page: { type: 'integer', minimum: 1, default: 1 },
      limit: { type: 'integer', minimum: 1, default: 50 },
      search: { type: 'string', maxLength: 200 },
      ...(extra ?? ({} as E)),
    },
  }) as const;

export const pageOf = (item: JSONSchema): JSONSchema => ({
  type: 'object',
  properties: {
    items: { type: 'array', items: item },
    total: { type: 'integer' },
    page: { type: 'integer' },
    limit: { type: 'integer' },
  },
  required: ['items', 'total', 'page', 'limit'],
});

/** Clamps a list limit to the maximum of decisions.md (200). */
export const clampLimit = (limit: number | undefined, max = 200): number => Math.min(limit ?? 50, max);
