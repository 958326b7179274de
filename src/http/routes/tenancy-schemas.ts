/** Schemas shared by the admin master routes, the tenant routes and whoami. */
import { timestamps } from '../schema.js';
import type { JSONSchema } from '../../contract/validate.js';

const str = { type: 'string' };
const int = { type: 'integer' };
const maxInt32 = 2_147_483_647;

export const namespaceName: JSONSchema = { type: 'string', maxLength: 64, pattern: '^$|^[A-Za-z0-9][A-Za-z0-9._-]*$' };
export const namespaceList: JSONSchema = { type: 'array', maxItems: 100, items: { ...namespaceName, minLength: 1 } };

const nullableTime = { type: ['string', 'null'] };

/** Budgets (docs/spend.md): an amount in the currency unit, null for none, and its period (the quota periods). */
export const budgetInput = {
  budget: { type: ['number', 'null'], minimum: 0, maximum: 1e15, description: 'spend limit in the currency unit per period (docs/spend.md); null: none' },
  budget_period: { type: 'string', enum: ['never', 'daily', 'weekly', 'monthly'], description: 'UTC periods like quota_reset_type; default never' },
};
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

const masterFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  group: { type: 'string', minLength: 1, maxLength: 100 },
  max_child_keys: { type: 'integer', minimum: 0, maximum: maxInt32 },
  global_qps: { type: 'integer', minimum: 0, maximum: maxInt32 },
  ...budgetInput,
};

export const masterCreateBody: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  properties: masterFields,
  required: ['name', 'group'],
};

export const masterUpdateBody: JSONSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: masterFields };

export const masterAccessBody: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    default_namespace: namespaceName,
    allowed_namespaces: namespaceList,
    propagate: { type: 'boolean', default: false, description: 'apply to the master\'s existing child keys as well' },
  },
};

export const keyAccessBody: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { default_namespace: namespaceName, allowed_namespaces: namespaceList },
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

/** Key options accepted on issue and update. */
const keyFields = {
  name: { type: 'string', maxLength: 100 },
  scopes: { type: 'string', maxLength: 255, description: 'free-form business label' },
  quota_limit: { type: 'integer', minimum: -1, maximum: Number.MAX_SAFE_INTEGER, description: 'total tokens; -1 unlimited' },
  quota_reset_type: { type: 'string', enum: ['never', 'daily', 'weekly', 'monthly'] },
  model_limits_enabled: { type: 'boolean' },
  model_limits: { type: 'string', maxLength: 4096, description: 'comma-separated model names' },
  allow_ips: { type: 'string', maxLength: 4096, description: 'comma-separated IPs or CIDR ranges' },
  deny_ips: { type: 'string', maxLength: 4096, description: 'comma-separated IPs or CIDR ranges' },
  default_namespace: namespaceName,
  allowed_namespaces: namespaceList,
  status: { type: 'string', enum: ['active', 'suspended'] },
  expires_at: { type: ['string', 'null'], format: 'date-time', description: 'RFC 3339, in the future; null: never' },
  ...budgetInput,
};

export const keyBudgetBody: JSONSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: budgetInput };

export const keyIssueBody: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { group: { type: 'string', minLength: 1, maxLength: 100, description: 'defaults to the master\'s group' }, ...keyFields },
};

export const keyUpdateBody: JSONSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: keyFields };

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
