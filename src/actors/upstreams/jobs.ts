/**
 * The upstream background job on the main thread: on a timer it asks the
 * upstreams actor to lift expired bans and to refresh OAuth tokens due.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';

export const upstreamJobIntervalMs = 60_000;

export function upstreamJobs(): ActorDefinition<MainContext> {
  let timer: NodeJS.Timeout | undefined;
  return {
    name: 'upstream-jobs',
    placement: 'main',
    handlers: {
      tick: async (_: unknown, ctx) => ({
        bans: await ctx.ask<{ lifted: number[] }>('upstreams', 'liftBans'),
        oauth: await ctx.ask<{ refreshed: number[]; failed: number[] }>('upstreams', 'refreshOAuth'),
      }),
    },
    start(ctx) {
      timer = setInterval(() => {
        ctx.ask('upstream-jobs', 'tick').catch((err: unknown) => ctx.log.error({ err }, 'upstream job failed'));
      }, upstreamJobIntervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
