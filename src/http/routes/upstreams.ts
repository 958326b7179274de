/** Provider groups, upstream keys and their statistics (admin). */
import { actorRoute, type Route } from '../route.js';
import { timestamps } from '../schema.js';
import { pageOf } from '../../contract/page.js';
import type { JSONSchema } from '../../contract/validate.js';
import { anyStatus, groupFields, keyFields, upstreamGroups, upstreamKeys, upstreamStats } from '../../actors/upstreams/handles.js';


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

const admin = { role: 'admin' as const };

export const upstreamRoutes: Route[] = [
  actorRoute(upstreamGroups.createGroup, {
    ...admin, method: 'POST', path: '/admin/provider-groups', tags: ['provider-groups'],
    summary: 'Create a provider group (cloud_location defaults to global for vertex)',
    success: { status: 201, schema: groupView },
  }),
  actorRoute(upstreamGroups.listGroups, {
    ...admin, method: 'GET', path: '/admin/provider-groups', tags: ['provider-groups'],
    summary: 'List provider groups (search: name, type or base_url)',
    success: { status: 200, schema: pageOf(groupView) },
  }),
  actorRoute(upstreamGroups.getGroup, {
    ...admin, method: 'GET', path: '/admin/provider-groups/{id}', tags: ['provider-groups'], summary: 'Read a provider group',
    success: { status: 200, schema: groupView },
  }),
  actorRoute(upstreamGroups.updateGroup, {
    ...admin, method: 'PUT', path: '/admin/provider-groups/{id}', tags: ['provider-groups'], summary: 'Update a provider group (fields given)',
    success: { status: 200, schema: groupView },
  }),
  actorRoute(upstreamGroups.deleteGroup, {
    ...admin, method: 'DELETE', path: '/admin/provider-groups/{id}', tags: ['provider-groups'],
    summary: 'Delete a provider group and its keys; 409 listing the active bindings on it unless force=true, which disables them',
    success: {
      status: 200,
      schema: { type: 'object', properties: { ...deleted.properties, disabled_bindings: { type: 'array', items: { type: 'integer' } } }, required: ['id', 'deleted', 'disabled_bindings'] },
    },
  }),
  actorRoute(upstreamKeys.createKey, {
    ...admin, method: 'POST', path: '/admin/api-keys', tags: ['api-keys'], summary: 'Create an upstream key (secrets masked in the answer)',
    success: { status: 201, schema: keyView },
  }),
  actorRoute(upstreamKeys.listKeys, {
    ...admin, method: 'GET', path: '/admin/api-keys', tags: ['api-keys'], summary: 'List upstream keys, secrets masked to the last 4 characters',
    success: { status: 200, schema: pageOf(keyView) },
  }),
  actorRoute(upstreamStats.keyStats, {
    ...admin, method: 'GET', path: '/admin/api-keys/stats', tags: ['api-keys'],
    summary: 'Requests, successes, failures and rates per key, per group and overall; since/until in Unix seconds (whole UTC days)',
    success: {
      status: 200,
      schema: statsView,
      // By design, unlike the log statistics (exact to the second): the data plane flushes per-key counters that are kept per UTC day.
      description: "Counters of the data plane's stats flushes, kept per whole UTC day by design: since/until select the UTC days containing them (both included), not seconds",
    },
  }),
  actorRoute(upstreamKeys.batchCreateKeys, {
    ...admin, method: 'POST', path: '/admin/api-keys/batch', tags: ['api-keys'], summary: 'Create many upstream keys at once (all or none)',
    bodyLimit: 16 * 1024 * 1024,
    success: { status: 201, schema: { type: 'object', properties: { items: { type: 'array', items: keyView }, total: { type: 'integer' } }, required: ['items', 'total'] } },
  }),
  actorRoute(upstreamKeys.batchKeyStatus, {
    ...admin, method: 'PUT', path: '/admin/api-keys/batch/status', tags: ['api-keys'], summary: 'Set the status of many upstream keys',
    success: { status: 200, schema: batchResult('updated') },
  }),
  actorRoute(upstreamKeys.batchDeleteKeys, {
    ...admin, method: 'POST', path: '/admin/api-keys/batch/delete', tags: ['api-keys'], summary: 'Delete many upstream keys',
    success: { status: 200, schema: batchResult('deleted') },
  }),
  actorRoute(upstreamKeys.getKey, {
    ...admin, method: 'GET', path: '/admin/api-keys/{id}', tags: ['api-keys'], summary: 'Read an upstream key, secrets whole',
    success: { status: 200, schema: keyView },
  }),
  actorRoute(upstreamKeys.updateKey, {
    ...admin, method: 'PUT', path: '/admin/api-keys/{id}', tags: ['api-keys'], summary: 'Update an upstream key (fields given; status active lifts a ban)',
    success: { status: 200, schema: keyView },
  }),
  actorRoute(upstreamKeys.deleteKey, {
    ...admin, method: 'DELETE', path: '/admin/api-keys/{id}', tags: ['api-keys'], summary: 'Delete an upstream key',
    success: { status: 200, schema: deleted },
  }),
];
