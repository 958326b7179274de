/**
 * Provider groups, upstream keys, their usage statistics and background work
 * (OAuth refresh, ban expiry), and the full routing snapshot.
 */
import { defineActor } from '../runtime/actor.js';
import { liftExpiredBans } from '../../storage/postgres/upstreams.js';
import { groupHandlers } from './groups.js';
import { keyHandlers } from './keys.js';
import { statsHandlers } from './stats.js';
import { refreshDueKeys } from './oauth.js';
import { commitChange } from '../outbox/change.js';
import { routedChange, snapshotRouting } from './sync.js';

export default defineActor({
  name: 'upstreams',
  placement: 'worker',
  handlers: {
    ...groupHandlers,
    ...keyHandlers,
    ...statsHandlers,

    refreshOAuth: (_: unknown, ctx) => refreshDueKeys(ctx),

    /** Auto bans whose ban_until passed return to active; the routing tables take the keys back. */
    liftBans: (_: unknown, ctx) =>
      routedChange(ctx, async (tx) => {
        const lifted = await liftExpiredBans(tx, ctx.now());
        return { result: { lifted: lifted.map((k) => k.id) }, affected: { groupIds: lifted.map((k) => k.group_id) } };
      }),

    /** The whole routing state; `present` are the routing keys the store holds now (stale ones are deleted). */
    snapshot: ({ present }: { present: string[] }, ctx) =>
      commitChange(ctx, (tx, out) => snapshotRouting(tx, out, present, ctx.now())),
  },
});
