/**
 * The outbox relay: the only writer of the shared store. It delivers outbox
 * entries in id order, each entry's operations atomically. While the store is
 * unreachable nothing counts as an attempt, so an outage of any length loses
 * nothing; an entry the store itself rejects is retried with backoff and
 * parked as dead after SVC_OUTBOX_MAX_RETRIES attempts so it cannot block the
 * queue forever. Each entry also sets the global configuration version to its
 * id, in the same atomic write, so a data plane can tell what it has applied.
 */
import type { CommonQueryMethods } from 'slonik';
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { markDelivered, outboxState, pendingEntries, recordFailure, undelivered, withRelayLock } from '../../storage/postgres/outbox.js';
import { configVersion } from '../../storage/postgres/sync-state.js';
import { keys } from '../../storage/redis/layout.js';
import { configVersionOp } from '../../storage/redis/writers/markers.js';

/** Longest a change waits for its delivery to the shared store before its answer (a store outage). */
const SETTLE_MS = 5000;

export interface RelayStats {
  delivered: number;
  failures: number;
  deadLettered: number;
  lastDeliveryAt: number | null;
  storeReachable: boolean;
}

/**
 * What `GET /admin/sync/status` shows of the outbox: the queue as stored (every node sees the same), then this node's
 * own counters since it started. Times are RFC 3339, as everywhere on the management interface.
 */
export interface OutboxReport {
  pending: number;
  retrying: number;
  dead: number;
  oldest_pending_at: string | null;
  delivered_since_start: number;
  failures_since_start: number;
  dead_since_start: number;
  store_reachable: boolean;
  last_delivery_at: string | null;
}

export function outboxRelay(): ActorDefinition<MainContext> & { stats: RelayStats } {
  const stats: RelayStats = { delivered: 0, failures: 0, deadLettered: 0, lastDeliveryAt: null, storeReachable: true };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  /** The largest entry id delivered: ids may commit out of order, the version must not go back. */
  let version = 0;

  /** One pass, by one control-plane node at a time. */
  const pass = (ctx: MainContext): Promise<void> => withRelayLock(ctx.db, (db) => deliver(ctx, db));

  /** Delivers due entries in order until the queue is empty, blocked or failing. */
  async function deliver(ctx: MainContext, db: CommonQueryMethods): Promise<void> {
    const { outboxBatch, outboxMaxRetries, outboxIntervalMs } = ctx.config;
    for (;;) {
      const { entries } = await pendingEntries(db, outboxBatch);
      if (entries.length === 0) return;
      const delivered: number[] = [];
      try {
        for (const entry of entries) {
          try {
            version = Math.max(version, entry.id);
            await ctx.store.apply([...entry.ops, configVersionOp(version)]);
            delivered.push(entry.id);
          } catch (err) {
            stats.failures++;
            const reachable = await ctx.store.ping();
            stats.storeReachable = reachable;
            if (!reachable) return; // an outage: try again next interval, attempts untouched
            const attempts = entry.attempts + 1;
            const dead = attempts >= outboxMaxRetries;
            if (dead) stats.deadLettered++;
            ctx.log.warn({ err, outbox_id: entry.id, attempts, dead }, 'shared store rejected an outbox entry');
            await recordFailure(db, entry.id, (err as Error).message, Math.min(outboxIntervalMs * 2 ** attempts, 60_000), dead);
            return; // later entries wait, keeping delivery in order
          }
        }
      } finally {
        await markDelivered(db, delivered, version);
        if (delivered.length > 0) {
          stats.delivered += delivered.length;
          stats.lastDeliveryAt = ctx.now();
          stats.storeReachable = true;
        }
      }
      if (entries.length < outboxBatch) return;
    }
  }

  /** Runs a pass now, or right after the one in progress. */
  function kick(ctx: MainContext): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await pass(ctx);
        } catch (err) {
          ctx.log.error({ err }, 'outbox pass failed');
        }
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    name: 'outbox',
    placement: 'main',
    concurrency: 16,
    stats,
    handlers: {
      /** Deliver now (sent after a commit that enqueued changes); resolves once delivered or deferred. */
      kick: (_: unknown, ctx) => kick(ctx),
      /**
       * Delivers now and waits until these entries are in the shared store,
       * whichever node's relay writes them (the pass lock may be held
       * elsewhere), for at most SETTLE_MS: a change is in force on this node
       * before its answer. True when delivered.
       */
      settle: async ({ ids }: { ids: number[] }, ctx) => {
        const deadline = Date.now() + SETTLE_MS;
        for (;;) {
          await kick(ctx);
          if ((await undelivered(ctx.db, ids)) === 0) return true;
          if (Date.now() >= deadline) {
            ctx.log.warn({ outbox_ids: ids }, 'change not yet in the shared store; answering anyway');
            return false;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      },
      state: async (_: unknown, ctx): Promise<OutboxReport> => ({
        ...(await outboxState(ctx.db)),
        delivered_since_start: stats.delivered,
        failures_since_start: stats.failures,
        dead_since_start: stats.deadLettered,
        store_reachable: stats.storeReachable,
        last_delivery_at: stats.lastDeliveryAt === null ? null : new Date(stats.lastDeliveryAt).toISOString(),
      }),
    },
    async start(ctx) {
      const inStore = await ctx.store.get(keys.configVersion).catch(() => null);
      version = Math.max(version, Number(inStore ?? 0) || 0, (await configVersion(ctx.db)).version);
      timer = setInterval(() => void kick(ctx), ctx.config.outboxIntervalMs);
      timer.unref();
      void kick(ctx);
    },
    async stop(ctx) {
      clearInterval(timer);
      await kick(ctx);
    },
  };
}
