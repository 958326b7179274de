/**
 * Master and Key authentication, plugged into the Authenticator's hooks. The
 * token's prefix decides which lookup runs, so a child key never costs a
 * master lookup (and whoami checks the store before any database access).
 * A child key or master key seen recently is answered from the identity
 * cache, which holds what the store (or, for a master, Postgres) said and is
 * dropped whenever the store changes.
 * A key's principal carries the identity it was resolved from, so whoami
 * answers without a second lookup; a master's whoami reads its view afresh
 * (key counts and budget use change without an identity change).
 */
import type { Authenticator } from './auth.js';
import type { Principal } from '../contract/principal.js';
import type { AppContext } from './context.js';
import type { KeyIdentity } from '../actors/tenancy/views.js';
import type { IdentityCache, MasterIdentity, MasterLookup } from '../actors/tenancy/identity-cache.js';

export type MasterPrincipal = Extract<Principal, { type: 'master' }> & { status: string; tokenHash: string };
export type KeyPrincipal = Extract<Principal, { type: 'key' }> & { identity: KeyIdentity };

export function installTenantAuth(auth: Authenticator, app: Pick<AppContext, 'ask' | 'now'>, cache: IdentityCache): void {
  const masterPrincipal = (identity: MasterIdentity, tokenHash: string): MasterPrincipal => ({ type: 'master', ...identity, tokenHash });
  auth.hooks.master = (token, tokenHash) => {
    if (!token.startsWith('mk-')) return null;
    const cached = cache.lookupMaster(tokenHash, app.now());
    if (cached) return masterPrincipal(cached, tokenHash); // no await: answered in this turn
    const generation = cache.generation;
    return app.ask<MasterLookup | null>('masters', 'authenticate', { tokenHash }).then((found) => {
      if (!found) return null;
      cache.fillMaster(tokenHash, found.identity, generation, app.now());
      return masterPrincipal(found.identity, tokenHash);
    });
  };
  const keyPrincipal = (identity: KeyIdentity | null, tokenHash: string): KeyPrincipal | null =>
    identity ? { type: 'key', id: identity.id, masterId: identity.master_id, tokenHash, identity } : null;
  auth.hooks.key = (token, tokenHash) => {
    if (!token.startsWith('sk-')) return null;
    const cached = cache.lookup(tokenHash, app.now());
    if (cached !== undefined) return keyPrincipal(cached, tokenHash); // no await: answered in this turn
    return app.ask<KeyIdentity | null>('identity', 'key', { tokenHash }).then((identity) => keyPrincipal(identity, tokenHash));
  };
}
