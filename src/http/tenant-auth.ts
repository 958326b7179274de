/**
 * Master and Key authentication, plugged into the Authenticator's hooks. The
 * token's prefix decides which lookup runs, so a child key never costs a
 * master lookup (and whoami checks the store before any database access).
 * A child key seen recently is answered from the identity cache, which holds
 * what the store said and is dropped whenever the store changes.
 * Each principal carries the identity it was resolved from, so whoami answers
 * without a second lookup.
 */
import type { Authenticator } from './auth.js';
import type { Principal } from '../contract/principal.js';
import type { AppContext } from './context.js';
import type { KeyIdentity, MasterView } from '../actors/tenancy/views.js';
import type { IdentityCache } from '../actors/tenancy/identity-cache.js';

export type MasterPrincipal = Extract<Principal, { type: 'master' }> & { status: string; view: MasterView };
export type KeyPrincipal = Extract<Principal, { type: 'key' }> & { identity: KeyIdentity };

export function installTenantAuth(auth: Authenticator, app: Pick<AppContext, 'ask' | 'now'>, cache: IdentityCache): void {
  auth.hooks.master = (token, tokenHash) =>
    token.startsWith('mk-') ? app.ask<MasterPrincipal | null>('masters', 'authenticate', { tokenHash }) : null;
  const keyPrincipal = (identity: KeyIdentity | null, tokenHash: string): KeyPrincipal | null =>
    identity ? { type: 'key', id: identity.id, masterId: identity.master_id, tokenHash, identity } : null;
  auth.hooks.key = (token, tokenHash) => {
    if (!token.startsWith('sk-')) return null;
    const cached = cache.lookup(tokenHash, app.now());
    if (cached !== undefined) return keyPrincipal(cached, tokenHash); // no await: answered in this turn
    return app.ask<KeyIdentity | null>('identity', 'key', { tokenHash }).then((identity) => keyPrincipal(identity, tokenHash));
  };
}
