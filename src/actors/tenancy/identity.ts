/**
 * Child-key identity on the main thread, next to the shared store: the token
 * metadata and the master's state are read and checked the way the data plane
 * checks them, before any database lookup. When the metadata is complete the
 * identity is served from it alone (no worker round trip); when it is missing
 * or incomplete (not yet delivered, store flushed) the database decides.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { tenancyKeys } from '../../storage/redis/layout.js';
import { identityFromStore, keyUsable, stateFromStore, storeInt } from './metadata.js';
import type { KeyIdentity } from './views.js';

export function identityActor(): ActorDefinition<MainContext> {
  return {
    name: 'identity',
    placement: 'main',
    concurrency: 1024,
    handlers: {
      /** The key's identity, or null (unknown, suspended, revoked, expired, old epoch); 400 on unparsable metadata. */
      key: async ({ tokenHash }: { tokenHash: string }, ctx): Promise<KeyIdentity | null> => {
        const meta = await ctx.store.hgetall(tenancyKeys.token(tokenHash));
        if (Object.keys(meta).length === 0) return fromDatabase(ctx, tokenHash);
        const master = await ctx.store.hgetall(tenancyKeys.master(storeInt(meta, 'master_id')));
        if (Object.keys(master).length === 0) return fromDatabase(ctx, tokenHash);
        if (!keyUsable(stateFromStore(meta, master), ctx.now())) return null;
        return identityFromStore(meta) ?? fromDatabase(ctx, tokenHash);
      },
    },
  };
}

const fromDatabase = (ctx: MainContext, tokenHash: string): Promise<KeyIdentity | null> =>
  ctx.ask<KeyIdentity | null>('child-keys', 'authenticate', { tokenHash });
