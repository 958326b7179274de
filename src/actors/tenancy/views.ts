/** Database rows as the wire shows them (and the identity whoami reports). */
import type { KeyRow, MasterRow } from '../../storage/postgres/tenancy.js';
import { moneyNumber } from '../../contract/money.js';

/** A budget as the wire shows it: amounts as JSON numbers (12 decimal places at most). */
export function budgetView(r: { budget: string | null; budget_period: string; budget_period_start: string | null; budget_used: string }) {
  return {
    budget: moneyNumber(r.budget),
    budget_period: r.budget_period,
    budget_period_start: r.budget_period_start,
    budget_used: moneyNumber(r.budget_used)!,
  };
}

export function masterView(m: MasterRow) {
  return {
    id: m.id,
    name: m.name,
    group: m.group,
    max_child_keys: m.max_child_keys,
    global_qps: m.global_qps,
    epoch: m.epoch,
    status: m.status,
    default_namespace: m.default_namespace,
    allowed_namespaces: m.allowed_namespaces,
    key_prefix: m.key_prefix,
    legacy: !m.has_digest,
    child_keys: m.child_keys,
    ...budgetView(m),
    createdAt: m.created_at,
    updatedAt: m.updated_at,
    deletedAt: { time: m.deleted_at, valid: m.deleted_at !== null },
  };
}
export type MasterView = ReturnType<typeof masterView>;

/** The key fields whoami reports: all of them derivable from the store metadata alone. */
export interface KeyIdentity {
  id: number;
  master_id: number;
  name: string;
  issued_by: string;
  issued_at_epoch: number;
  group: string;
  scopes: string;
  quota_limit: number;
  quota_used: number;
  quota_reset_type: string;
  model_limits_enabled: boolean;
  model_limits: string;
  allow_ips: string;
  deny_ips: string;
  default_namespace: string;
  allowed_namespaces: string[];
  status: string;
  expires_at: string | null;
}

export function keyIdentity(k: KeyRow): KeyIdentity {
  return {
    id: k.id,
    master_id: k.master_id,
    name: k.name,
    issued_by: k.issued_by,
    issued_at_epoch: k.issued_at_epoch,
    group: k.group,
    scopes: k.scopes,
    quota_limit: k.quota_limit,
    quota_used: k.quota_used,
    quota_reset_type: k.quota_reset_type,
    model_limits_enabled: k.model_limits_enabled,
    model_limits: k.model_limits,
    allow_ips: k.allow_ips,
    deny_ips: k.deny_ips,
    default_namespace: k.default_namespace,
    allowed_namespaces: k.allowed_namespaces,
    status: k.status,
    expires_at: k.expires_at,
  };
}

export function keyView(k: KeyRow) {
  return {
    ...keyIdentity(k),
    key_prefix: k.key_prefix,
    revoked: k.revoked,
    revoked_at: k.revoked_at,
    request_count: k.request_count,
    last_accessed_at: k.last_accessed_at,
    quota_period_start: k.quota_period_start,
    ...budgetView(k),
    createdAt: k.created_at,
    updatedAt: k.updated_at,
  };
}
export type KeyView = ReturnType<typeof keyView>;
