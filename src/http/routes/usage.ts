/** POST /internal/stats/flush: usage counters reported by the data plane. */
import { flushBodySchema } from '../../actors/tenancy/flush-body.js';
import type { Route } from '../route.js';

export const usageRoutes: Route[] = [
  {
    method: 'POST',
    path: '/internal/stats/flush',
    role: 'internal',
    summary: 'Add per-key and per-upstream-key counters, atomically; a repeated flush_id within 10 minutes is not applied twice',
    tags: ['internal'],
    bodyLimit: 16 * 1024 * 1024,
    body: flushBodySchema,
    bodyBytes: true,
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
