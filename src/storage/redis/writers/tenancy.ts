/**
 * The tenancy hashes of the data plane's contract (docs/store-layout.md,
 * "Tenancy"): how a key's and a master's rows become `tenancy:token:*` and
 * `tenancy:master:*`. Every value is a string; times are Unix seconds,
 * booleans `0`/`1`.
 */
import { tenancyKeys } from '../layout.js';
import type { StoreOp } from '../store.js';
import type { KeyRow, MasterRow } from '../../postgres/tenancy.js';

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

/** Every field of `tenancy:token:<token_hash>`. */
export function tokenFields(k: KeyRow) {
  return {
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
  };
}

/** The fields of a token hash, by name: what a reader of the hash may ask for. */
export type TokenFields = ReturnType<typeof tokenFields>;

/** The complete metadata hash of one key. */
export const tokenMetaOp = (k: KeyRow): StoreOp => ({ op: 'hset', key: tenancyKeys.token(k.token_hash), fields: tokenFields(k) });

/** Only the quota counter: written by flushes. */
export const quotaUsedOp = (tokenHash: string, used: number): StoreOp => ({
  op: 'hset',
  key: tenancyKeys.token(tokenHash),
  fields: { quota_used: String(used) } satisfies Partial<TokenFields>,
});

/** A new quota period: the counter back to 0 and the period's start (ISO), so a data plane can tell periods apart. */
export const quotaResetOp = (tokenHash: string, periodStartIso: string): StoreOp => ({
  op: 'hset',
  key: tenancyKeys.token(tokenHash),
  fields: { quota_used: '0', quota_period_start: unix(periodStartIso) } satisfies Partial<TokenFields>,
});

/** Whose budget a spend belongs to: a master's hash, or a key's (by its token hash). */
export type BudgetOwner = { master: number } | { token: string };

/** Only the spend and its period start: written by the spend job. */
export const budgetUsedOp = (owner: BudgetOwner, used: string, periodStartIso: string | null): StoreOp => ({
  op: 'hset',
  key: 'master' in owner ? tenancyKeys.master(owner.master) : tenancyKeys.token(owner.token),
  fields: { budget_used: used, budget_period_start: unix(periodStartIso) } satisfies Partial<TokenFields>,
});

/** Every field of `tenancy:master:<master_id>`; a deleted master stays readable with status `deleted` and its raised epoch. */
export function masterFields(m: MasterRow, deleted = false) {
  return {
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
  };
}

/** The fields of a master hash, by name. */
export type MasterFields = ReturnType<typeof masterFields>;

/** The master's state hash. */
export const masterMetaOp = (m: MasterRow, deleted = false): StoreOp => ({ op: 'hset', key: tenancyKeys.master(m.id), fields: masterFields(m, deleted) });
