/**
 * Master and Key authentication, plugged into the Authenticator's hooks. The
 * token's prefix decides which lookup runs, so a child key never costs a
 * master lookup (and whoami checks the store before any database access).
 * Each principal carries the identity it was resolved from, so whoami answers
 * without a second lookup.
 */
import type { Authenticator, Principal } from './auth.js';
import type { AppContext } from './context.js';
import type { KeyIdentity, MasterView } from '../actors/tenancy/views.js';

export type MasterPrincipal = Extract<Principal, { type: 'master' }> & { status: string; view: MasterView };
export type KeyPrincipal = Extract<Principal, { type: 'key' }> & { identity: KeyIdentity };

export function installTenantAuth(auth: Authenticator, app: Pick<AppContext, 'ask'>): void {
  auth.hooks.master = async (token, tokenHash) =>
    token.startsWith('mk-') ? app.ask<MasterPrincipal | null>('masters', 'authenticate', { tokenHash }) : null;
  auth.hooks.key = async (token, tokenHash): Promise<KeyPrincipal | null> => {
    if (!token.startsWith('sk-')) return null;
    const identity = await app.ask<KeyIdentity | null>('identity', 'key', { tokenHash });
    return identity ? { type: 'key', id: identity.id, masterId: identity.master_id, tokenHash, identity } : null;
  };
}
