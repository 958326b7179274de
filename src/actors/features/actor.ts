/**
 * Feature flags: overrides live in Postgres; every change rewrites the flags
 * in the shared store through the outbox, in the same transaction.
 */
import { defineActor, implement } from '../runtime/actor.js';
import { features } from './handles.js';
import { clearOverride, readOverrides, writeOverride } from '../../storage/postgres/features.js';
import { commitChange } from '../outbox/change.js';
import { clearedByZero, effectiveFlags, flagOps } from './flags.js';

export default defineActor({
  name: 'features',
  placement: 'worker',
  handlers: {
    ...implement(features, {
      get: async (_, ctx) => effectiveFlags(await readOverrides(ctx.db)),

      update: async ({ body }, ctx) => {
        const overrides = await commitChange(ctx, async (tx, out) => {
          for (const [name, value] of Object.entries(body)) {
            if (clearedByZero.has(name) && value === 0) await clearOverride(tx, name);
            else await writeOverride(tx, name, value);
          }
          const next = await readOverrides(tx);
          out.change('features', flagOps(next));
          return next;
        });
        // In force on this node before the answer (body logging, retention); other nodes poll (SVC_CONFIG_POLL_MS).
        const flags = effectiveFlags(overrides);
        await ctx.ask('logs', 'setFlags', flags);
        return flags;
      },
    }),

    /** Store operations for a full snapshot. */
    snapshotOps: async (_: unknown, ctx) => flagOps(await readOverrides(ctx.db)),
  },
});
