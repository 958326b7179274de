/** Spend (docs/spend.md): pricing stored log records from current prices. */
import { actorRoute, type Route } from '../route.js';
import { logs } from '../../actors/logs/handles.js';

export const spendRoutes: Route[] = [
  actorRoute(logs.costBackfill, {
    method: 'POST', path: '/admin/logs/cost-backfill', role: 'admin', tags: ['spend'],
    summary: 'Price stored log records from the current prices (rows written before prices existed); answers how many rows were priced and unpriced',
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: {
          priced: { type: 'integer', description: 'rows whose model has a price, now priced' },
          unpriced: { type: 'integer', description: 'rows whose model has none: cost 0, counted unpriced' },
        },
        required: ['priced', 'unpriced'],
      },
    },
  }),
];
