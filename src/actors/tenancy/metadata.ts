/**
 * Token metadata and master state read back from the shared store the way the
 * data plane does (trimmed integers; anything unparsable is an error), for
 * /auth/whoami. The hashes are written by src/storage/redis/writers/tenancy.ts.
 */
import { badRequest } from '../../errors.js';
import type { TokenFields } from '../../storage/redis/writers/tenancy.js';
import type { KeyIdentity } from './views.js';

/** The fields every usable key state is decided by. */
export interface KeyState {
  status: string;
  revoked: boolean;
  /** Unix seconds, 0 = never. */
  expiresAt: number;
  issuedAtEpoch: number;
  masterStatus: string;
  masterEpoch: number;
}

/** The one validity rule, shared by the store path and the database fallback. */
export const keyUsable = (s: KeyState, nowMs: number): boolean =>
  s.status === 'active' &&
  !s.revoked &&
  (s.expiresAt === 0 || s.expiresAt * 1000 > nowMs) &&
  s.masterStatus === 'active' &&
  s.issuedAtEpoch === s.masterEpoch;

/** A whitespace-trimmed integer of the store; unparsable is a 400 (as the data plane rejects it). */
export function storeInt(hash: Record<string, string>, field: string): number {
  const raw = (hash[field] ?? '').trim();
  if (!/^-?\d+$/.test(raw)) throw badRequest('unparsable token metadata', { [field]: `not an integer: ${JSON.stringify(hash[field] ?? null)}` });
  return Number(raw);
}

const identityFields: Array<keyof TokenFields> = [
  'key_id', 'master_id', 'status', 'revoked', 'expires_at', 'issued_at_epoch', 'issued_by', 'name', 'group', 'scopes',
  'quota_limit', 'quota_used', 'quota_reset_type', 'model_limits_enabled', 'model_limits', 'allow_ips', 'deny_ips',
  'default_namespace', 'allowed_namespaces',
];

/** The state checked before any database lookup; throws 400 on unparsable values. */
export function stateFromStore(meta: Record<string, string>, master: Record<string, string>): KeyState {
  return {
    status: (meta.status ?? '').trim(),
    revoked: storeInt(meta, 'revoked') !== 0,
    expiresAt: storeInt(meta, 'expires_at'),
    issuedAtEpoch: storeInt(meta, 'issued_at_epoch'),
    masterStatus: (master.status ?? '').trim(),
    masterEpoch: storeInt(master, 'epoch'),
  };
}

/** The identity whoami reports, when the metadata holds every field of it; else null (read the database). */
export function identityFromStore(meta: Record<string, string>): KeyIdentity | null {
  if (!identityFields.every((f) => f in meta)) return null;
  const expires = storeInt(meta, 'expires_at');
  return {
    id: storeInt(meta, 'key_id'),
    master_id: storeInt(meta, 'master_id'),
    name: meta.name!,
    issued_by: meta.issued_by!,
    issued_at_epoch: storeInt(meta, 'issued_at_epoch'),
    group: meta.group!,
    scopes: meta.scopes!,
    quota_limit: storeInt(meta, 'quota_limit'),
    quota_used: storeInt(meta, 'quota_used'),
    quota_reset_type: meta.quota_reset_type!,
    model_limits_enabled: storeInt(meta, 'model_limits_enabled') !== 0,
    model_limits: meta.model_limits!,
    allow_ips: meta.allow_ips!,
    deny_ips: meta.deny_ips!,
    default_namespace: meta.default_namespace!,
    allowed_namespaces: meta.allowed_namespaces ? meta.allowed_namespaces.split(',') : [],
    status: meta.status!.trim(),
    expires_at: expires === 0 ? null : new Date(expires * 1000).toISOString(),
  };
}
