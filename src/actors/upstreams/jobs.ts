/**
 * The upstream background jobs on the main thread: lifting expired bans every
 * few seconds (a lapsed ban reaches the store within banIntervalMs plus one
 * delivery, docs/store-layout.md) and refreshing OAuth tokens due every minute.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';

export const upstreamJobIntervalMs = 60_000;
/** One UPDATE over live keys with a ban; a key's ban lapses in the store at most this much late. */
export const banIntervalMs = 5_000;

export function upstreamJobs(): ActorDefinition<MainContext> {
  const timers: NodeJS.Timeout[] = [];
  return {
    name: 'upstream-jobs',
    placement: 'main',
    handlers: {
      tick: async (_: unknown, ctx) => ({
        bans: await ctx.ask<{ lifted: number[] }>('upstreams', 'liftBans'),
        oauth: await ctx.ask<{ refreshed: number[]; failed: number[] }>('upstreams', 'refreshOAuth'),
      }),
      bans: (_: unknown, ctx) => ctx.ask<{ lifted: number[] }>('upstreams', 'liftBans'),
    },
    start(ctx) {
      const every = (ms: number, type: string) => {
        const timer = setInterval(() => {
          ctx.ask('upstream-jobs', type).catch((err: unknown) => ctx.log.error({ err }, 'upstream job failed'));
        }, ms);
        timer.unref();
        timers.push(timer);
      };
      every(banIntervalMs, 'bans');
      every(upstreamJobIntervalMs, 'tick');
    },
    stop() {
      for (const timer of timers) clearInterval(timer);
    },
  };
}
