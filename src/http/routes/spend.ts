/** Spend (docs/spend.md): pricing stored log records from current prices. */
import type { Route } from '../route.js';
import { unixTime } from '../../contract/value-rules.js';

export const spendRoutes: Route[] = [
  {
    method: 'POST', path: '/admin/logs/cost-backfill', role: 'admin', tags: ['spend'], actor: 'logs', message: 'costBackfill',
    summary: 'Price stored log records from the current prices (rows written before prices existed); answers how many rows were priced and unpriced',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        since: unixTime('Unix seconds, inclusive; absent: the oldest record'),
        until: unixTime('Unix seconds, exclusive; absent: now'),
        only_zero: { type: 'boolean', default: true, description: 'only rows whose cost is 0 (true), or every row of the slice (false)' },
      },
    },
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
  },
];
