/** Configuration versions: data-plane acknowledgements and the admin's view of every node. */
import { actorRoute, handlerRoute, type Route } from '../route.js';
import { configSync } from '../../actors/sync/handles.js';
import type { StoreWatchState } from '../../actors/sync/store-watch.js';

const int = { type: 'integer' };
const str = { type: 'string' };

const time = { type: 'string', format: 'date-time' };

const node = {
  type: 'object',
  properties: {
    node_id: str,
    applied_version: { ...int, description: 'The configuration version this node last acknowledged' },
    lag: { ...int, description: 'config_version minus applied_version: versions the node has not applied yet' },
    first_seen_at: time,
    last_seen_at: time,
    seconds_since_seen: int,
  },
  required: ['node_id', 'applied_version', 'lag', 'first_seen_at', 'last_seen_at', 'seconds_since_seen'],
};

const outbox = {
  type: 'object',
  description: 'The queue as stored (the same on every node), then counters of the answering node since it started',
  properties: {
    pending: { ...int, description: 'Entries not yet delivered to the shared store' },
    retrying: { ...int, description: 'Pending entries the store rejected at least once' },
    dead: { ...int, description: 'Entries parked after SVC_OUTBOX_MAX_RETRIES rejections; they block nothing' },
    oldest_pending_at: { ...time, type: ['string', 'null'] },
    delivered_since_start: int,
    failures_since_start: int,
    dead_since_start: { ...int, description: 'Entries this node parked as dead' },
    store_reachable: { type: 'boolean' },
    last_delivery_at: { ...time, type: ['string', 'null'] },
  },
  required: ['pending', 'retrying', 'dead', 'oldest_pending_at', 'delivered_since_start', 'failures_since_start', 'dead_since_start', 'store_reachable', 'last_delivery_at'],
};

const storeData = {
  type: 'object',
  description: 'whether the shared store holds every key the data plane reads (docs/store-layout.md, "Full snapshot and refill")',
  properties: {
    data: { type: 'string', enum: ['complete', 'refilling', 'unknown'] },
    layout_version: { type: ['integer', 'null'] },
    checked_at: { ...time, type: ['string', 'null'] },
    refills: int,
    last_refill: {
      type: ['object', 'null'],
      properties: { reason: str, started_at: time, completed_at: { ...time, type: ['string', 'null'] }, duration_ms: { type: ['integer', 'null'] } },
    },
  },
};

export const syncRoutes: Route[] = [
  actorRoute(configSync.ack, {
    method: 'POST',
    path: '/internal/config/ack',
    role: 'internal',
    summary: 'A data-plane node reports the configuration version it has applied',
    tags: ['internal'],
    success: {
      status: 200,
      schema: { type: 'object', properties: { node_id: str, version: int, config_version: int, lag: int } },
    },
  }),
  handlerRoute({
    method: 'GET',
    path: '/admin/sync/status',
    role: 'admin',
    summary: 'The delivered configuration version, every known data-plane node with its lag and last-seen time, and the outbox',
    description: 'Times are RFC 3339. `config_version` is the version delivered; each node\'s `applied_version` is the one it acknowledged.',
    tags: ['sync'],
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: {
          config_version: { ...int, description: 'The configuration version delivered to the shared store (the data plane reads it there)' },
          config_updated_at: time,
          nodes: { type: 'array', items: node },
          outbox,
          store: storeData,
        },
        required: ['config_version', 'nodes', 'outbox', 'store'],
      },
    },
    handler: async (_, app) => {
      const [nodes, box, store] = await Promise.all([
        app.ask<Record<string, unknown>>('config-sync', 'nodes'),
        app.ask('outbox', 'state'),
        app.ask('store-watch', 'check'),
      ]);
      return { ...nodes, outbox: box, store: withRfc3339Times(store as StoreWatchState) };
    },
  }),
];

/** The watch keeps epoch milliseconds; the management interface speaks RFC 3339 (one time format per answer). */
function withRfc3339Times(s: StoreWatchState) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    ...s,
    checked_at: iso(s.checked_at),
    last_refill: s.last_refill && { ...s.last_refill, started_at: iso(s.last_refill.started_at), completed_at: iso(s.last_refill.completed_at) },
  };
}
