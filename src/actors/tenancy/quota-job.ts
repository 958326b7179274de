/**
 * The quota reset job: zeroes quota_used at daily, weekly and monthly UTC
 * boundaries. Each key remembers the start of its current period in the
 * database, so a boundary passed while the service was down is caught up by
 * the first run at start, and a repeated run changes nothing.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';

const INTERVAL_MS = 30_000;

export function quotaResetJob(): ActorDefinition<MainContext> {
  let timer: NodeJS.Timeout | undefined;
  const run = (ctx: MainContext) => ctx.ask<{ reset: number }>('tenancy-usage', 'resetQuotas');
  return {
    name: 'quota-reset',
    placement: 'main',
    handlers: {
      /** One pass now; answers how many keys were reset. */
      run: (_: unknown, ctx) => run(ctx),
    },
    start(ctx) {
      const tick = () => void ctx.ask('quota-reset', 'run').catch((err: unknown) => ctx.log.error({ err }, 'quota reset failed'));
      timer = setInterval(tick, INTERVAL_MS);
      timer.unref();
      tick();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
