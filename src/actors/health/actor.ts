/**
 * Health of the three stores, asked by GET /health. Each check is bounded in
 * time so a hung dependency reports `down` instead of hanging the probe.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import type { StoreData, StoreWatchState } from '../sync/store-watch.js';

const within = (p: Promise<boolean>, ms: number): Promise<boolean> =>
  Promise.race([p.catch(() => false), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

export interface HealthReport {
  database: boolean;
  store: boolean;
  clickhouse: boolean;
  /** Whether the store holds every key the data plane reads (the store watch's last finding). */
  storeData: StoreData;
}

export function healthActor(): ActorDefinition<MainContext> {
  return {
    name: 'health',
    placement: 'main',
    concurrency: 64,
    handlers: {
      check: async (_: unknown, ctx): Promise<HealthReport> => {
        const [database, store, clickhouse] = await Promise.all([
          within(ctx.database.ping(), 2000),
          within(ctx.store.ping(), 2000),
          within(ctx.clickhouse.ping(), 2000),
        ]);
        const { data } = await ctx.ask<StoreWatchState>('store-watch', 'state');
        return { database, store, clickhouse, storeData: store ? data : 'unknown' };
      },
    },
  };
}
