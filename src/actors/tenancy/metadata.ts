/**
 * Token metadata and master state in the shared store (docs/store-layout.md,
 * "Tenancy"): how rows become hashes, and how /auth/whoami reads them back the
 * way the data plane does (trimmed integers; anything unparsable is an error).
 */
import { badRequest } from '../../errors.js';
import { tenancyKeys } from '../../storage/redis/layout.js';
import type { StoreOp } from '../../storage/redis/store.js';
import type { KeyRow, MasterRow } from '../../storage/postgres/tenancy.js';
import type { KeyIdentity } from './views.js';

const unix = (iso: string | null): string => (iso ? String(Math.floor(Date.parse(iso) / 1000)) : '0');
const flag = (b: boolean): string => (b ? '1' : '0');

/** The budget fields of a key's or master's hash (layout 3): amounts as decimal text, `-1` = no budget. */
export function budgetFields(b: { budget: string | null; budget_used: string; budget_period: string; budget_period_start: string | null }) {
  return {
    budget_limit: b.budget ?? '-1',
    budget_used: b.budget_used,
    budget_reset_type: b.budget_period,
    budget_period_start: unix(b.budget_period_start),
  };
}

/** Only the spend and its period start: written by the spend job. */
export const budgetUsedOp = (key: string, used: string, periodStartIso: string | null): StoreOp => ({
  op: 'hset',
  key,
  fields: { budget_used: used, budget_period_start: unix(periodStartIso) },
});

/** The complete metadata hash of one key. */
export function tokenMetaOp(k: KeyRow): StoreOp {
  return {
    op: 'hset',
    key: tenancyKeys.token(k.token_hash),
    fields: {
      key_id: String(k.id),
      master_id: String(k.master_id),
      status: k.status,
      revoked: flag(k.revoked),
      expires_at: unix(k.expires_at),
      issued_at_epoch: String(k.issued_at_epoch),
      issued_by: k.issued_by,
      name: k.name,
      group: k.group,
      scopes: k.scopes,
      quota_limit: String(k.quota_limit),
      quota_used: String(k.quota_used),
      quota_reset_type: k.quota_reset_type,
      quota_period_start: unix(k.quota_period_start),
      model_limits_enabled: flag(k.model_limits_enabled),
      model_limits: k.model_limits,
      allow_ips: k.allow_ips,
      deny_ips: k.deny_ips,
      default_namespace: k.default_namespace,
      allowed_namespaces: k.allowed_namespaces.join(','),
      ...budgetFields(k),
    },
  };
}

/** Only the quota counter: written by flushes and resets. */
export const quotaUsedOp = (tokenHash: string, used: number): StoreOp => ({
  op: 'hset',
  key: tenancyKeys.token(tokenHash),
  fields: { quota_used: String(used) },
});

/** A new quota period: the counter back to 0 and the period's start (ISO), so a data plane can tell periods apart. */
export const quotaResetOp = (tokenHash: string, periodStartIso: string): StoreOp => ({
  op: 'hset',
  key: tenancyKeys.token(tokenHash),
  fields: { quota_used: '0', quota_period_start: unix(periodStartIso) },
});

/** The master's state; a deleted master stays readable with status `deleted` and its raised epoch. */
export function masterMetaOp(m: MasterRow, deleted = false): StoreOp {
  return {
    op: 'hset',
    key: tenancyKeys.master(m.id),
    fields: {
      id: String(m.id),
      name: m.name,
      group: m.group,
      epoch: String(m.epoch),
      status: deleted ? 'deleted' : m.status,
      global_qps: String(m.global_qps),
      max_child_keys: String(m.max_child_keys),
      default_namespace: m.default_namespace,
      allowed_namespaces: m.allowed_namespaces.join(','),
      ...budgetFields(m),
    },
  };
}

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

const identityFields = [
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
