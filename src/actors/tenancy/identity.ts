/**
 * Child-key identity on the main thread, next to the shared store: the token
 * metadata and the master's state are read and checked the way the data plane
 * checks them, before any database lookup. When the metadata is complete the
 * identity is served from it alone (no worker round trip) and kept in the
 * identity cache; when it is missing or incomplete (not yet delivered, store
 * flushed) the database decides, and nothing is cached.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { configChannel, tenancyKeys } from '../../storage/redis/layout.js';
import type { IdentityCache } from './identity-cache.js';
import type { StoreOp } from '../../storage/redis/store.js';
import { identityFromStore, keyUsable, stateFromStore, storeInt } from './metadata.js';
import type { KeyIdentity } from './views.js';

export function identityActor(cache: IdentityCache): ActorDefinition<MainContext> {
  let unsubscribe: (() => Promise<void>) | undefined;
  return {
    name: 'identity',
    placement: 'main',
    concurrency: 1024,
    handlers: {
      /** The key's identity, or null (unknown, suspended, revoked, expired, old epoch); 400 on unparsable metadata. */
      key: async ({ tokenHash }: { tokenHash: string }, ctx): Promise<KeyIdentity | null> => {
        const generation = cache.generation;
        const meta = await ctx.store.hgetall(tenancyKeys.token(tokenHash));
        if (Object.keys(meta).length === 0) return fromDatabase(ctx, tokenHash);
        const master = await ctx.store.hgetall(tenancyKeys.master(storeInt(meta, 'master_id')));
        if (Object.keys(master).length === 0) return fromDatabase(ctx, tokenHash);
        const state = stateFromStore(meta, master);
        if (!keyUsable(state, ctx.now())) return null;
        const identity = identityFromStore(meta);
        if (!identity) return fromDatabase(ctx, tokenHash);
        cache.fill(tokenHash, identity, state, generation, ctx.now());
        return identity;
      },
      /** A change of this node is in the store (written by any node's relay): drop what it touched. */
      storeWritten: ({ ops }: { ops: StoreOp[] }) => {
        cache.storeWritten(ops);
      },
    },
    async start(ctx) {
      if (!cache.enabled) return;
      // Other nodes' tenancy changes arrive here; this node's own writes reach the cache as they are applied.
      unsubscribe = await ctx.store.subscribe(configChannel, (m) => cache.announced(m)).catch((err: unknown) => {
        ctx.log.warn({ err }, 'config channel unavailable: identity cache entries expire by age only');
        return undefined;
      });
    },
    async stop() {
      await unsubscribe?.().catch(() => undefined);
      cache.clear();
    },
  };
}

const fromDatabase = (ctx: MainContext, tokenHash: string): Promise<KeyIdentity | null> =>
  ctx.ask<KeyIdentity | null>('child-keys', 'authenticate', { tokenHash });
