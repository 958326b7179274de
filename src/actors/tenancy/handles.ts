/**
 * The tenancy messages that routes reach (masters, child keys), with the
 * schemas of what each receives. Plain data: the HTTP layer imports this
 * module without the actors' code or their stores.
 */
import { handles, type Validated } from '../../contract/handle.js';
import { idParam } from '../../contract/params.js';
import { pageQuery } from '../../contract/page.js';

const maxInt32 = 2_147_483_647;

const namespaceName = { type: 'string', maxLength: 64, pattern: '^$|^[A-Za-z0-9][A-Za-z0-9._-]*$' } as const;
const namespaceList = { type: 'array', maxItems: 100, items: { ...namespaceName, minLength: 1 } } as const;

/** Budgets (docs/spend.md): an amount in the currency unit, null for none, and its period (the quota periods). */
export const budgetInput = {
  budget: { type: ['number', 'null'], minimum: 0, maximum: 1e15, description: 'spend limit in the currency unit per period (docs/spend.md); null: none' },
  budget_period: { type: 'string', enum: ['never', 'daily', 'weekly', 'monthly'], description: 'UTC periods like quota_reset_type; default never' },
} as const;

const masterFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  group: { type: 'string', minLength: 1, maxLength: 100 },
  max_child_keys: { type: 'integer', minimum: 0, maximum: maxInt32 },
  global_qps: { type: 'integer', minimum: 0, maximum: maxInt32 },
  ...budgetInput,
} as const;

const masterCreateBody = {
  type: 'object',
  additionalProperties: false,
  properties: masterFields,
  required: ['name', 'group'],
} as const;

const masterUpdateBody = { type: 'object', additionalProperties: false, minProperties: 1, properties: masterFields } as const;

const masterAccessBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    default_namespace: namespaceName,
    allowed_namespaces: namespaceList,
    propagate: { type: 'boolean', default: false, description: 'apply to the master\'s existing child keys as well' },
  },
} as const;

const keyAccessBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { default_namespace: namespaceName, allowed_namespaces: namespaceList },
} as const;

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
} as const;

const keyBudgetBody = { type: 'object', additionalProperties: false, minProperties: 1, properties: budgetInput } as const;

const keyIssueBody = {
  type: 'object',
  additionalProperties: false,
  properties: { group: { type: 'string', minLength: 1, maxLength: 100, description: 'defaults to the master\'s group' }, ...keyFields },
} as const;

const keyUpdateBody = { type: 'object', additionalProperties: false, minProperties: 1, properties: keyFields } as const;

const keyParams = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1 }, keyId: { type: 'integer', minimum: 1 } },
  required: ['id', 'keyId'],
} as const;

/**
 * The body of POST /internal/stats/flush. It is parsed and validated by the
 * usage actor on a worker thread, not on the HTTP thread (parser `bytes`): a
 * flush carries up to 100,000 items (16 MiB), and parsing, validating and
 * cloning them to the worker took the HTTP thread ~1.5 ms per 1,000 keys
 * (docs/performance.md). Same rules and the same 400s as any other route's body.
 */
const count = { type: 'integer', minimum: 0, maximum: 1e12 } as const;

const flushBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    flush_id: { type: 'string', minLength: 1, maxLength: 128 },
    keys: {
      type: 'array',
      maxItems: 100_000,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          token_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          requests: count,
          tokens: count,
          last_accessed_at: { type: 'integer', minimum: 0, maximum: 253402300799, default: 0 },
        },
        required: ['token_hash', 'requests', 'tokens'],
      },
    },
    upstream_keys: {
      type: 'array',
      maxItems: 100_000,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { id: { type: 'integer', minimum: 1 }, requests: count, success: count, failure: count },
        required: ['id', 'requests', 'success', 'failure'],
      },
    },
  },
} as const;

/** What a key is issued or updated with. */
export type KeyInput = Validated<typeof keyIssueBody>;
/** A budget and its period, as a master or a key is created or changed with. */
export type BudgetInput = Validated<typeof keyBudgetBody>;

export const masters = handles('masters', {
  create: { body: masterCreateBody },
  list: { query: pageQuery() },
  update: { params: idParam, body: masterUpdateBody },
  remove: { params: idParam },
  freeze: { params: idParam },
  unfreeze: { params: idParam },
  resetKey: { params: idParam },
  access: { params: idParam, body: masterAccessBody },
  listKeys: { params: idParam, query: pageQuery() },
  issueKey: { params: idParam, body: keyIssueBody },
  revokeKey: { params: keyParams },
});

export const childKeys = handles('child-keys', {
  // Tenant (/v1/tokens): always the calling master's own keys.
  issue: { body: keyIssueBody },
  list: { query: pageQuery() },
  get: { params: idParam },
  update: { params: idParam, body: keyUpdateBody },
  revoke: { params: idParam },
  // Admin (/admin/keys).
  adminGet: { params: idParam },
  adminAccess: { params: idParam, body: keyAccessBody },
  adminBudget: { params: idParam, body: keyBudgetBody },
});

export const tenancyUsage = handles('tenancy-usage', {
  flush: { body: flushBody, parser: 'bytes' },
});
