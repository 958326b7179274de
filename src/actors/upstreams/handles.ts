/**
 * The upstream messages that routes reach (provider groups, upstream keys and
 * their statistics, namespaces and bindings, the model registry, the full store
 * sync), with the schemas of what each receives and the value lists they
 * enumerate. Plain data: the HTTP layer imports this module without the
 * actors' code or their stores.
 */
import { handles } from '../../contract/handle.js';
import { idParam } from '../../contract/params.js';
import { pageQuery } from '../../contract/page.js';
import { unixTime } from '../../contract/value-rules.js';

/** The enumerated values of the upstream domain (decisions.md), shared by routes and rules. */
export const groupTypes = ['openai', 'anthropic', 'gemini', 'openai_compatible', 'vertex', 'anthropic_oauth', 'gemini_oauth', 'openai_oauth'] as const;
export const headersProfiles = ['default', 'official_client', 'minimal'] as const;
/** Statuses an admin may set; `auto_disabled` is the system's. */
export const adminStatuses = ['active', 'manual_disabled'] as const;
export const upstreamStatuses = ['active', 'auto_disabled', 'manual_disabled'] as const;
export const bindingStatuses = ['active', 'disabled'] as const;
export const namespaceStatuses = ['active', 'suspended'] as const;
/** Binding selectors: how a binding's selector_value resolves to one of its group's upstream models. */
export const selectorTypes = ['exact'] as const;

const adminStatus = { type: 'string', enum: [...adminStatuses], description: 'auto_disabled is set by the system only' } as const;
export const anyStatus = { type: 'string', enum: [...upstreamStatuses] } as const;
const nullableString = <const N extends number>(maxLength: N) => ({ type: ['string', 'null'], maxLength }) as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time', description: 'RFC 3339' } as const;
const ids = { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'integer', minimum: 1 } } as const;

export const groupFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  type: { type: 'string', enum: [...groupTypes] },
  base_url: { type: 'string', maxLength: 2048, format: 'uri', pattern: '^https?://[^\\s/?#]+', description: 'http(s) URL' },
  models: { type: 'array', maxItems: 1000, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 200 } },
  status: adminStatus,
  cloud_project: nullableString(200),
  cloud_location: nullableString(100),
  static_headers: {
    type: 'object',
    maxProperties: 64,
    propertyNames: { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$" },
    additionalProperties: { type: 'string', maxLength: 4096 },
  },
  headers_profile: { type: 'string', enum: [...headersProfiles] },
} as const;

export const keyFields = {
  group_id: { type: 'integer', minimum: 1 },
  api_key: { type: 'string', maxLength: 8192 },
  weight: { type: 'integer', minimum: 0, maximum: 1_000_000 },
  status: adminStatus,
  auto_ban: { type: 'boolean' },
  ban_reason: { type: 'string', maxLength: 500 },
  ban_until: nullableTime,
  access_token: nullableString(8192),
  refresh_token: nullableString(8192),
  expires_at: nullableTime,
  account_id: nullableString(255),
  project_id: nullableString(255),
} as const;

const keyInput = { type: 'object', additionalProperties: false, required: ['group_id'], properties: keyFields } as const;

/** Provider groups (upstreams actor, src/actors/upstreams/groups.ts). */
export const upstreamGroups = handles('upstreams', {
  createGroup: { body: { type: 'object', additionalProperties: false, required: ['name', 'type', 'base_url'], properties: groupFields } },
  listGroups: { query: pageQuery() },
  getGroup: { params: idParam },
  updateGroup: { params: idParam, body: { type: 'object', additionalProperties: false, minProperties: 1, properties: groupFields } },
  deleteGroup: { params: idParam, query: { type: 'object', properties: { force: { type: 'boolean', default: false } } } },
});

/** Upstream keys (upstreams actor, src/actors/upstreams/keys.ts). */
export const upstreamKeys = handles('upstreams', {
  createKey: { body: keyInput },
  listKeys: { query: pageQuery({ status: anyStatus, group_id: { type: 'integer', minimum: 1 } }) },
  batchCreateKeys: { body: { type: 'object', additionalProperties: false, required: ['items'], properties: { items: { type: 'array', minItems: 1, maxItems: 1000, items: keyInput } } } },
  batchKeyStatus: { body: { type: 'object', additionalProperties: false, required: ['ids', 'status'], properties: { ids, status: adminStatus } } },
  batchDeleteKeys: { body: { type: 'object', additionalProperties: false, required: ['ids'], properties: { ids } } },
  getKey: { params: idParam },
  updateKey: { params: idParam, body: { type: 'object', additionalProperties: false, minProperties: 1, properties: keyFields } },
  deleteKey: { params: idParam },
});

/** Upstream key statistics (upstreams actor, src/actors/upstreams/stats.ts). */
export const upstreamStats = handles('upstreams', {
  keyStats: {
    query: {
      type: 'object',
      properties: {
        since: unixTime('Unix seconds; selects the whole UTC day containing it'),
        until: unixTime('Unix seconds; selects through the whole UTC day containing it'),
        group_id: { type: 'integer', minimum: 1 },
      },
    },
  },
});

/** No dots: the bindingKey is namespace + "." + public_model and must split unambiguously. */
const namespaceName = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;
export const nsStatus = { type: 'string', enum: [...namespaceStatuses] } as const;
const bStatus = { type: 'string', enum: [...bindingStatuses] } as const;

export const bindingFields = {
  namespace: namespaceName,
  public_model: { type: 'string', minLength: 1, maxLength: 200 },
  group_id: { type: 'integer', minimum: 1 },
  selector_type: { type: 'string', enum: [...selectorTypes] },
  selector_value: { type: 'string', minLength: 1, maxLength: 200, description: 'default: public_model' },
  weight: { type: 'integer', minimum: 0, maximum: 1_000_000 },
  status: bStatus,
} as const;
const bindingInput = { type: 'object', additionalProperties: false, required: ['namespace', 'public_model', 'group_id'], properties: bindingFields } as const;

export const bindings = handles('bindings', {
  createNamespace: {
    body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: namespaceName, description: { type: 'string', maxLength: 500 }, status: nsStatus } },
  },
  listNamespaces: { query: pageQuery({ status: nsStatus }) },
  updateNamespace: {
    params: { type: 'object', properties: { name: namespaceName }, required: ['name'] },
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { description: { type: 'string', maxLength: 500 }, status: nsStatus } },
  },
  createBinding: { body: bindingInput },
  listBindings: {
    query: pageQuery({ namespace: namespaceName, group_id: { type: 'integer', minimum: 1 }, status: bStatus, public_model: { type: 'string', maxLength: 200 } }),
  },
  batchCreateBindings: {
    body: { type: 'object', additionalProperties: false, required: ['items'], properties: { items: { type: 'array', minItems: 1, maxItems: 1000, items: bindingInput } } },
  },
  batchBindingStatus: { body: { type: 'object', additionalProperties: false, required: ['ids', 'status'], properties: { ids, status: bStatus } } },
  getBinding: { params: idParam },
  updateBinding: { params: idParam, body: { type: 'object', additionalProperties: false, minProperties: 1, properties: bindingFields } },
  deleteBinding: { params: idParam },
});

/** ModelDTO: the input form of a capability registry entry, for the admin API and registry payloads alike. */
export const modelKinds = ['chat', 'completion', 'embedding', 'image', 'audio', 'rerank'] as const;

/** Prices are exact to 12 decimal places (decisions.md, "Money"); the bound keeps a record's cost within Decimal(38,12). */
const price = { type: 'number', minimum: 0, maximum: 1_000_000 } as const;
const nullablePrice = { type: ['number', 'null'], minimum: 0, maximum: 1_000_000 } as const;

export const modelDtoProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  kind: { type: 'string', enum: [...modelKinds], description: 'default chat' },
  context_window: { type: 'integer', minimum: 0, maximum: 100_000_000 },
  max_output_tokens: { type: 'integer', minimum: 0, maximum: 100_000_000 },
  cost_per_token: { ...price, description: 'price per token in the service currency unit (docs/spend.md); default 0' },
  cost_per_input_token: { ...nullablePrice, description: 'price per input token; null or absent: cost_per_token' },
  cost_per_output_token: { ...nullablePrice, description: 'price per output token; null or absent: cost_per_token' },
  supports_fim: { type: 'boolean' },
  supports_functions: { type: 'boolean' },
  supports_tool_choice: { type: 'boolean' },
  supports_vision: { type: 'boolean' },
} as const;

export const modelDto = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: modelDtoProperties,
} as const;

export const models = handles('models', {
  list: {},
  create: { body: modelDto },
  get: { params: idParam },
  update: { params: idParam, body: { ...modelDto, required: [], minProperties: 1 } },
  delete: { params: idParam },
  registryRefresh: { body: { type: 'object', additionalProperties: false, properties: { ref: { type: 'string', minLength: 1, maxLength: 200, default: 'main' } } } },
  registryStatus: {},
  registryCheck: {},
  registryRollback: {},
});

/** The full store sync (main-thread actor, src/actors/upstreams/full-sync.ts). */
export const storeSync = handles('sync', { snapshot: {} });
