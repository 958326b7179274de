/**
 * Health of the three stores and of the log pipeline, asked by GET /health.
 * Each store check is bounded in time so a hung dependency reports `down`
 * instead of hanging the probe. The pipeline is degraded while inserts fail
 * or dead letters wait (docs/log-pipeline.md).
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
  /** The log pipeline stores what it accepts: no outage being retried, no dead letters. */
  logPipeline: boolean;
}

export function healthActor(): ActorDefinition<MainContext> {
  return {
    name: 'health',
    placement: 'main',
    concurrency: 64,
    handlers: {
      check: async (_: unknown, ctx): Promise<HealthReport> => {
        const [database, store, clickhouse, logs] = await Promise.all([
          within(ctx.database.ping(), 2000),
          within(ctx.store.ping(), 2000),
          within(ctx.clickhouse.ping(), 2000),
          ctx.ask<{ degraded: boolean }>('logs', 'state').catch(() => ({ degraded: true })),
        ]);
        // The markers are read now (two GETs, or the check in progress): an emptied store shows at once, and a
        // finished refill too, not at the next timed check.
        const { data } = store ? await ctx.ask<StoreWatchState>('store-watch', 'check') : { data: 'unknown' as const };
        return { database, store, clickhouse, storeData: store ? data : 'unknown', logPipeline: !logs.degraded };
      },
    },
  };
}
