/**
 * Notices a shared store that lost its data (Redis restarted without
 * persistence, a failover to an empty replica, FLUSHDB) and has it rewritten
 * in full. Every SVC_STORE_CHECK_MS it reads two marker keys that each full
 * snapshot writes (docs/store-layout.md, "Full snapshot and refill"):
 * `meta:layout_version`, last, and `cp:store:snapshot`, first. Both present
 * with this layout version: the store is complete. Anything else: a snapshot
 * is started unless one is still queued. The first check runs at start, so a
 * fresh store gets every key the data plane reads.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { keys, layoutVersion } from '../../storage/redis/layout.js';

/** `complete`; `refilling` (a snapshot is being written); `unknown` (the store does not answer, or not yet checked). */
export type StoreData = 'complete' | 'refilling' | 'unknown';

export interface StoreWatchState {
  data: StoreData;
  /** The layout version the store holds (null: none). */
  layout_version: number | null;
  checked_at: number | null;
  /** Snapshots this node started because the store had lost data. */
  refills: number;
  last_refill: { reason: string; started_at: number; completed_at: number | null; duration_ms: number | null } | null;
}

export function storeWatch(): ActorDefinition<MainContext> & { state: StoreWatchState } {
  const state: StoreWatchState = { data: 'unknown', layout_version: null, checked_at: null, refills: 0, last_refill: null };
  let timer: NodeJS.Timeout | undefined;
  let checking: Promise<StoreWatchState> | null = null;

  async function check(ctx: MainContext): Promise<StoreWatchState> {
    let version: string | null;
    let started: string | null;
    try {
      [version, started] = await Promise.all([ctx.store.get(keys.layoutVersion), ctx.store.get(keys.snapshotStarted)]);
    } catch {
      state.data = 'unknown';
      return state;
    }
    state.checked_at = ctx.now();
    state.layout_version = version === null ? null : Number(version);
    if (version === String(layoutVersion) && started !== null) {
      if (state.data === 'refilling' && state.last_refill && state.last_refill.completed_at === null) {
        state.last_refill.completed_at = ctx.now();
        state.last_refill.duration_ms = ctx.now() - state.last_refill.started_at;
        ctx.log.info({ duration_ms: state.last_refill.duration_ms }, 'shared store refilled');
      }
      state.data = 'complete';
      return state;
    }
    const reason = version === null ? (started === null ? 'empty' : 'snapshot_incomplete') : version !== String(layoutVersion) ? 'layout_version' : 'emptied_during_snapshot';
    state.data = 'refilling';
    // A refill stays open from the first check that found the data missing until a check finds it complete.
    if (!state.last_refill || state.last_refill.completed_at !== null) {
      state.last_refill = { reason, started_at: ctx.now(), completed_at: null, duration_ms: null };
    }
    const result = await ctx.ask<{ status: string }>('sync', 'snapshot', { reason });
    if (result.status === 'ok') {
      state.refills++;
      ctx.log.warn({ reason }, reason === 'empty' ? 'shared store empty (new, or lost its data): writing a full snapshot' : 'shared store incomplete: writing a full snapshot');
    }
    return state;
  }

  const run = (ctx: MainContext): Promise<StoreWatchState> =>
    (checking ??= check(ctx)
      .catch((err: unknown) => {
        ctx.log.error({ err }, 'store check failed');
        return state;
      })
      .finally(() => {
        checking = null;
      }));

  return {
    name: 'store-watch',
    placement: 'main',
    concurrency: 64,
    state,
    handlers: {
      /** Checks now (or joins the check in progress). */
      check: (_: unknown, ctx) => run(ctx),
      state: () => state,
    },
    async start(ctx) {
      // Awaited: a fresh store has its snapshot queued (and the relay kicked) before the service listens.
      await run(ctx);
      timer = setInterval(() => void run(ctx), ctx.config.storeCheckMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
