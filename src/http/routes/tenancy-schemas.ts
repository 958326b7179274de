/** Schemas shared by the admin master routes, the tenant routes and whoami. */
import { timestamps } from '../schema.js';
import type { JSONSchema } from '../../contract/validate.js';

const str = { type: 'string' };
const int = { type: 'integer' };
const nullableTime = { type: ['string', 'null'] };

const budgetOutput = {
  budget: { type: ['number', 'null'] },
  budget_period: str,
  budget_period_start: nullableTime,
  budget_used: { type: 'number', description: 'spend of the current period as last computed from the logs' },
};

export const masterView: JSONSchema = {
  type: 'object',
  properties: {
    id: int,
    name: str,
    group: str,
    max_child_keys: int,
    global_qps: int,
    epoch: int,
    status: str,
    default_namespace: str,
    allowed_namespaces: { type: 'array', items: str },
    key_prefix: str,
    legacy: { type: 'boolean' },
    child_keys: int,
    ...budgetOutput,
    ...timestamps,
  },
  required: ['id', 'name', 'group', 'max_child_keys', 'global_qps', 'epoch', 'status'],
};

export const masterWithKey: JSONSchema = {
  ...masterView,
  properties: { ...(masterView.properties as object), master_key: str },
  required: [...(masterView.required as string[]), 'master_key'],
};

/** The identity fields of a key (what whoami shows). */
const keyIdentityProps = {
  id: int,
  master_id: int,
  name: str,
  issued_by: str,
  issued_at_epoch: int,
  group: str,
  scopes: str,
  quota_limit: int,
  quota_used: int,
  quota_reset_type: str,
  model_limits_enabled: { type: 'boolean' },
  model_limits: str,
  allow_ips: str,
  deny_ips: str,
  default_namespace: str,
  allowed_namespaces: { type: 'array', items: str },
  status: str,
  expires_at: nullableTime,
};

export const keyView: JSONSchema = {
  type: 'object',
  properties: {
    ...keyIdentityProps,
    key_prefix: str,
    revoked: { type: 'boolean' },
    revoked_at: nullableTime,
    request_count: int,
    last_accessed_at: nullableTime,
    quota_period_start: nullableTime,
    ...budgetOutput,
    createdAt: str,
    updatedAt: str,
  },
  required: ['id', 'master_id', 'issued_by', 'status', 'revoked'],
};

export const keyWithSecret: JSONSchema = {
  ...keyView,
  properties: { ...(keyView.properties as object), key_secret: str },
  required: [...(keyView.required as string[]), 'key_secret'],
};

/** whoami: one shape for the three kinds of caller. */
export const identityView: JSONSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['admin', 'master', 'key'] },
    role: str,
    ...(masterView.properties as object),
    ...keyIdentityProps,
  },
  required: ['type', 'role'],
};
