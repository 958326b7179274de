/** Provider groups, upstream keys and their statistics (admin). */
import type { Route } from '../route.js';
import { unixTime } from '../../contract/value-rules.js';
import { timestamps } from '../schema.js';
import { idParam } from '../../contract/params.js';
import { pageOf, pageQuery } from '../../contract/page.js';
import type { JSONSchema } from '../../contract/validate.js';
import { adminStatuses, groupTypes, headersProfiles, upstreamStatuses } from '../../actors/upstreams/values.js';

const adminStatus = { type: 'string', enum: [...adminStatuses], description: 'auto_disabled is set by the system only' };
const anyStatus = { type: 'string', enum: [...upstreamStatuses] };
const nullableString = (maxLength: number) => ({ type: ['string', 'null'], maxLength });
const nullableTime = { type: ['string', 'null'], format: 'date-time', description: 'RFC 3339' };
const ids = { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'integer', minimum: 1 } };

const groupFields = {
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
};

const groupView: JSONSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    ...groupFields,
    status: anyStatus,
    static_headers: { type: 'object', additionalProperties: { type: 'string' } },
    ...timestamps,
  },
  required: ['id', 'name', 'type', 'base_url', 'models', 'status', 'static_headers', 'headers_profile', 'createdAt', 'updatedAt', 'deletedAt'],
};

const keyFields = {
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
};

const keyInput = { type: 'object', additionalProperties: false, required: ['group_id'], properties: keyFields };

const keyView: JSONSchema = {
  type: 'object',
  properties: { id: { type: 'integer' }, ...keyFields, status: anyStatus, ...timestamps },
  required: ['id', 'group_id', 'api_key', 'weight', 'status', 'auto_ban', 'ban_reason', 'ban_until', 'createdAt', 'updatedAt', 'deletedAt'],
};

const deleted = { type: 'object', properties: { id: { type: 'integer' }, deleted: { type: 'boolean' } }, required: ['id', 'deleted'] };
const batchResult = (verb: string) => ({
  type: 'object',
  properties: { [verb]: { type: 'integer' }, ids: { type: 'array', items: { type: 'integer' } }, not_found: { type: 'array', items: { type: 'integer' } } },
  required: [verb, 'ids', 'not_found'],
});

const counters = {
  requests: { type: 'integer' },
  success: { type: 'integer' },
  failure: { type: 'integer' },
  success_rate: { type: 'number' },
  failure_rate: { type: 'number' },
};
const statsView = {
  type: 'object',
  properties: {
    since: { type: ['integer', 'null'] },
    until: { type: ['integer', 'null'] },
    total: { type: 'object', properties: counters },
    groups: { type: 'array', items: { type: 'object', properties: { group_id: { type: 'integer' }, name: { type: 'string' }, keys: { type: 'integer' }, ...counters } } },
    keys: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, group_id: { type: 'integer' }, group_name: { type: 'string' }, status: { type: 'string' }, ...counters } } },
  },
  required: ['since', 'until', 'total', 'groups', 'keys'],
};

const admin = { role: 'admin' as const, actor: 'upstreams' };

export const upstreamRoutes: Route[] = [
  {
    ...admin, method: 'POST', path: '/admin/provider-groups', tags: ['provider-groups'],
    summary: 'Create a provider group (cloud_location defaults to global for vertex)',
    body: { type: 'object', additionalProperties: false, required: ['name', 'type', 'base_url'], properties: groupFields },
    success: { status: 201, schema: groupView }, message: 'createGroup',
  },
  {
    ...admin, method: 'GET', path: '/admin/provider-groups', tags: ['provider-groups'],
    summary: 'List provider groups (search: name, type or base_url)',
    query: pageQuery(), success: { status: 200, schema: pageOf(groupView) }, message: 'listGroups',
  },
  {
    ...admin, method: 'GET', path: '/admin/provider-groups/{id}', tags: ['provider-groups'], summary: 'Read a provider group',
    params: idParam, success: { status: 200, schema: groupView }, message: 'getGroup',
  },
  {
    ...admin, method: 'PUT', path: '/admin/provider-groups/{id}', tags: ['provider-groups'], summary: 'Update a provider group (fields given)',
    params: idParam, body: { type: 'object', additionalProperties: false, minProperties: 1, properties: groupFields },
    success: { status: 200, schema: groupView }, message: 'updateGroup',
  },
  {
    ...admin, method: 'DELETE', path: '/admin/provider-groups/{id}', tags: ['provider-groups'],
    summary: 'Delete a provider group and its keys; 409 listing the active bindings on it unless force=true, which disables them',
    params: idParam, query: { type: 'object', properties: { force: { type: 'boolean', default: false } } },
    success: {
      status: 200,
      schema: { type: 'object', properties: { ...deleted.properties, disabled_bindings: { type: 'array', items: { type: 'integer' } } }, required: ['id', 'deleted', 'disabled_bindings'] },
    },
    message: 'deleteGroup',
  },
  {
    ...admin, method: 'POST', path: '/admin/api-keys', tags: ['api-keys'], summary: 'Create an upstream key (secrets masked in the answer)',
    body: keyInput, success: { status: 201, schema: keyView }, message: 'createKey',
  },
  {
    ...admin, method: 'GET', path: '/admin/api-keys', tags: ['api-keys'], summary: 'List upstream keys, secrets masked to the last 4 characters',
    query: pageQuery({ status: anyStatus, group_id: { type: 'integer', minimum: 1 } }), success: { status: 200, schema: pageOf(keyView) }, message: 'listKeys',
  },
  {
    ...admin, method: 'GET', path: '/admin/api-keys/stats', tags: ['api-keys'],
    summary: 'Requests, successes, failures and rates per key, per group and overall; since/until in Unix seconds (whole UTC days)',
    query: {
      type: 'object',
      properties: {
        since: unixTime('Unix seconds; selects the whole UTC day containing it'),
        until: unixTime('Unix seconds; selects through the whole UTC day containing it'),
        group_id: { type: 'integer', minimum: 1 },
      },
    },
    success: {
      status: 200,
      schema: statsView,
      // By design, unlike the log statistics (exact to the second): the data plane flushes per-key counters that are kept per UTC day.
      description: "Counters of the data plane's stats flushes, kept per whole UTC day by design: since/until select the UTC days containing them (both included), not seconds",
    },
    message: 'keyStats',
  },
  {
    ...admin, method: 'POST', path: '/admin/api-keys/batch', tags: ['api-keys'], summary: 'Create many upstream keys at once (all or none)',
    body: { type: 'object', additionalProperties: false, required: ['items'], properties: { items: { type: 'array', minItems: 1, maxItems: 1000, items: keyInput } } },
    bodyLimit: 16 * 1024 * 1024,
    success: { status: 201, schema: { type: 'object', properties: { items: { type: 'array', items: keyView }, total: { type: 'integer' } }, required: ['items', 'total'] } },
    message: 'batchCreateKeys',
  },
  {
    ...admin, method: 'PUT', path: '/admin/api-keys/batch/status', tags: ['api-keys'], summary: 'Set the status of many upstream keys',
    body: { type: 'object', additionalProperties: false, required: ['ids', 'status'], properties: { ids, status: adminStatus } },
    success: { status: 200, schema: batchResult('updated') }, message: 'batchKeyStatus',
  },
  {
    ...admin, method: 'POST', path: '/admin/api-keys/batch/delete', tags: ['api-keys'], summary: 'Delete many upstream keys',
    body: { type: 'object', additionalProperties: false, required: ['ids'], properties: { ids } },
    success: { status: 200, schema: batchResult('deleted') }, message: 'batchDeleteKeys',
  },
  {
    ...admin, method: 'GET', path: '/admin/api-keys/{id}', tags: ['api-keys'], summary: 'Read an upstream key, secrets whole',
    params: idParam, success: { status: 200, schema: keyView }, message: 'getKey',
  },
  {
    ...admin, method: 'PUT', path: '/admin/api-keys/{id}', tags: ['api-keys'], summary: 'Update an upstream key (fields given; status active lifts a ban)',
    params: idParam, body: { type: 'object', additionalProperties: false, minProperties: 1, properties: keyFields },
    success: { status: 200, schema: keyView }, message: 'updateKey',
  },
  {
    ...admin, method: 'DELETE', path: '/admin/api-keys/{id}', tags: ['api-keys'], summary: 'Delete an upstream key',
    params: idParam, success: { status: 200, schema: deleted }, message: 'deleteKey',
  },
];
