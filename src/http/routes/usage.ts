/** POST /internal/stats/flush: usage counters reported by the data plane. */
import type { Route } from '../route.js';

const count = { type: 'integer', minimum: 0, maximum: 1e12 };

export const usageRoutes: Route[] = [
  {
    method: 'POST',
    path: '/internal/stats/flush',
    role: 'internal',
    summary: 'Add per-key and per-upstream-key counters, atomically; a repeated flush_id within 10 minutes is not applied twice',
    tags: ['internal'],
    bodyLimit: 16 * 1024 * 1024,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        flush_id: { type: 'string', minLength: 1, maxLength: 128 },
        keys: {
          type: 'array',
          maxItems: 100_000,
          items: {
            type: 'object',
            additionalProperties: false,
            properties: {
              token_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
              requests: count,
              tokens: count,
              last_accessed_at: { type: 'integer', minimum: 0, maximum: 253402300799, default: 0 },
            },
            required: ['token_hash', 'requests', 'tokens'],
          },
        },
        upstream_keys: {
          type: 'array',
          maxItems: 100_000,
          items: {
            type: 'object',
            additionalProperties: false,
            properties: { id: { type: 'integer', minimum: 1 }, requests: count, success: count, failure: count },
            required: ['id', 'requests', 'success', 'failure'],
          },
        },
      },
    },
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: { accepted_keys: { type: 'integer' }, accepted_upstream_keys: { type: 'integer' } },
        required: ['accepted_keys', 'accepted_upstream_keys'],
      },
    },
    actor: 'tenancy-usage',
    message: 'flush',
  },
];
