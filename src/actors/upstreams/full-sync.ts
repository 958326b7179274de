/**
 * POST /admin/sync/snapshot: a full write of the database state to the shared
 * store. Runs on the main thread because it reads which routing keys the store
 * holds (to delete stale ones); the writes still go through the outbox.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { enqueueOps } from '../../storage/postgres/outbox.js';
import { configChange, routingKeys } from '../../storage/redis/layout.js';
import type { StoreOp } from '../../storage/redis/store.js';

export function fullSync(): ActorDefinition<MainContext> {
  return {
    name: 'sync',
    placement: 'main',
    handlers: {
      snapshot: async (_: unknown, ctx) => {
        // With the store down there is nothing to compare against: write everything, remove nothing.
        const present = (await Promise.all(routingKeys.patterns.map((p) => ctx.store.scan(p))).catch(() => [])).flat();
        const flagOps = await ctx.ask<StoreOp[]>('features', 'snapshotOps');
        await ctx.db.transaction((tx) => enqueueOps(tx, [...flagOps, configChange('features', ctx.now())]));
        const routing = await ctx.ask<Record<string, unknown>>('upstreams', 'snapshot', { present });
        return { status: 'ok', ...routing };
      },
    },
  };
}
