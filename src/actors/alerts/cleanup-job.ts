/**
 * The cleanup job: hourly, deletes resolved and dismissed alerts closed more
 * than 90 days ago (the `alerts` actor does the deletion on a worker).
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';

const INTERVAL_MS = 3_600_000;

export function alertCleanupJob(): ActorDefinition<MainContext> {
  let timer: NodeJS.Timeout | undefined;
  return {
    name: 'alert-cleanup',
    placement: 'main',
    handlers: {
      /** One pass now; answers how many alerts were deleted. */
      run: (_: unknown, ctx) => ctx.ask<{ deleted: number }>('alerts', 'cleanup'),
    },
    start(ctx) {
      timer = setInterval(() => {
        ctx.ask('alert-cleanup', 'run').catch((err: unknown) => ctx.log.error({ err }, 'alert cleanup failed'));
      }, INTERVAL_MS);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
