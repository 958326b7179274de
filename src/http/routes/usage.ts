/** POST /internal/stats/flush: usage counters reported by the data plane. */
import { tenancyUsage } from '../../actors/tenancy/handles.js';
import { actorRoute, type Route } from '../route.js';

export const usageRoutes: Route[] = [
  // The handle's parser is `bytes`: the body's bytes go to the worker, which validates them with this route's schema.
  actorRoute(tenancyUsage.flush, {
    method: 'POST',
    path: '/internal/stats/flush',
    role: 'internal',
    summary: 'Add per-key and per-upstream-key counters, atomically; a repeated flush_id within 10 minutes is not applied twice',
    tags: ['internal'],
    bodyLimit: 16 * 1024 * 1024,
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: { accepted_keys: { type: 'integer' }, accepted_upstream_keys: { type: 'integer' } },
        required: ['accepted_keys', 'accepted_upstream_keys'],
      },
    },
  }),
];
