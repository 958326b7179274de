/** Configuration versions: data-plane acknowledgements and the admin's view of every node. */
import { handlerRoute, type Route } from '../route.js';

const int = { type: 'integer' };
const str = { type: 'string' };

const node = {
  type: 'object',
  properties: { node_id: str, version: int, lag: int, first_seen_at: str, last_seen_at: str, seconds_since_seen: int },
};

const outbox = {
  type: 'object',
  properties: {
    pending: int, dead: int, retrying: int, oldest_pending_at: { type: ['string', 'null'] },
    delivered: int, failures: int, deadLettered: int, storeReachable: { type: 'boolean' },
    lastDeliveryAt: { type: ['integer', 'null'] },
  },
};

const storeData = {
  type: 'object',
  description: 'whether the shared store holds every key the data plane reads (docs/store-layout.md, "Full snapshot and refill")',
  properties: {
    data: { type: 'string', enum: ['complete', 'refilling', 'unknown'] },
    layout_version: { type: ['integer', 'null'] },
    checked_at: { type: ['integer', 'null'] },
    refills: int,
    last_refill: {
      type: ['object', 'null'],
      properties: { reason: str, started_at: int, completed_at: { type: ['integer', 'null'] }, duration_ms: { type: ['integer', 'null'] } },
    },
  },
};

export const syncRoutes: Route[] = [
  {
    method: 'POST',
    path: '/internal/config/ack',
    role: 'internal',
    summary: 'A data-plane node reports the configuration version it has applied',
    tags: ['internal'],
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['node_id', 'version'],
      properties: {
        node_id: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
        version: { type: 'integer', minimum: 0 },
      },
    },
    success: {
      status: 200,
      schema: { type: 'object', properties: { node_id: str, version: int, config_version: int, lag: int } },
    },
    actor: 'config-sync',
    message: 'ack',
  },
  handlerRoute({
    method: 'GET',
    path: '/admin/sync/status',
    role: 'admin',
    summary: 'The delivered configuration version, every known data-plane node with its lag and last-seen time, and the outbox',
    tags: ['sync'],
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: { config_version: int, config_updated_at: str, nodes: { type: 'array', items: node }, outbox, store: storeData },
        required: ['config_version', 'nodes', 'outbox', 'store'],
      },
    },
    handler: async (_, app) => {
      const [nodes, box, store] = await Promise.all([
        app.ask<Record<string, unknown>>('config-sync', 'nodes'),
        app.ask('outbox', 'state'),
        app.ask('store-watch', 'check'),
      ]);
      return { ...nodes, outbox: box, store };
    },
  }),
];
