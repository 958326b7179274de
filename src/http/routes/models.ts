/** The model capability registry, the remote model registry and the full store sync (admin). */
import { actorRoute, type Route } from '../route.js';
import { timestamps } from '../schema.js';
import { modelDtoProperties, models, storeSync } from '../../actors/upstreams/handles.js';

const modelView = {
  type: 'object',
  properties: { id: { type: 'integer' }, ...modelDtoProperties, source: { type: 'string', enum: ['admin', 'registry'] }, ...timestamps },
  required: ['id', 'name', 'kind', 'context_window', 'max_output_tokens', 'cost_per_token', 'cost_per_input_token', 'cost_per_output_token', 'supports_fim', 'supports_functions', 'supports_tool_choice', 'supports_vision', 'source', 'createdAt', 'updatedAt', 'deletedAt'],
};

const refreshView = {
  type: ['object', 'null'],
  properties: { id: { type: 'integer' }, ref: { type: 'string' }, version: { type: ['string', 'null'] }, source_url: { type: 'string' }, applied_at: { type: 'string' }, models: { type: 'integer' } },
};
const registryStatus = {
  type: 'object',
  properties: {
    configured: { type: 'boolean' },
    source_url: { type: ['string', 'null'] },
    current: refreshView,
    previous: refreshView,
    refreshes: { type: 'integer' },
    registry_models: { type: 'integer' },
    total_models: { type: 'integer' },
  },
  required: ['configured', 'source_url', 'current', 'previous', 'refreshes', 'registry_models', 'total_models'],
};
const names = { type: 'array', items: { type: 'string' } };

const model = { role: 'admin' as const, tags: ['models'] };
const registry = { role: 'admin' as const, tags: ['model-registry'] };

export const modelRoutes: Route[] = [
  actorRoute(models.list, { ...model, method: 'GET', path: '/admin/models', summary: 'All models of the capability registry', success: { status: 200, schema: { type: 'array', items: modelView } } }),
  actorRoute(models.create, { ...model, method: 'POST', path: '/admin/models', summary: 'Create a model (ModelDTO)', success: { status: 201, schema: modelView } }),
  actorRoute(models.get, { ...model, method: 'GET', path: '/admin/models/{id}', summary: 'Read a model', success: { status: 200, schema: modelView } }),
  actorRoute(models.update, {
    ...model, method: 'PUT', path: '/admin/models/{id}', summary: 'Update a model (ModelDTO fields given)',
    success: { status: 200, schema: modelView },
  }),
  actorRoute(models.delete, {
    ...model, method: 'DELETE', path: '/admin/models/{id}', summary: 'Delete a model',
    success: { status: 200, schema: { type: 'object', properties: { id: { type: 'integer' }, deleted: { type: 'boolean' } }, required: ['id', 'deleted'] } },
  }),
  actorRoute(models.registryRefresh, {
    ...registry, method: 'POST', path: '/admin/model-registry/refresh', summary: 'Fetch the registry at ref from SVC_MODEL_REGISTRY_URL and apply it',
    success: { status: 200, schema: registryStatus },
  }),
  actorRoute(models.registryStatus, { ...registry, method: 'GET', path: '/admin/model-registry/status', summary: 'The current and previous registry refresh', success: { status: 200, schema: registryStatus } }),
  actorRoute(models.registryCheck, {
    ...registry, method: 'POST', path: '/admin/model-registry/check', summary: 'Compare the registry with the models provider groups declare',
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: {
          ok: { type: 'boolean' },
          groups: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, models: { type: 'integer' }, unknown_models: names } } },
          unknown_models: names,
          unserved_models: names,
        },
        required: ['ok', 'groups', 'unknown_models', 'unserved_models'],
      },
    },
  }),
  actorRoute(models.registryRollback, { ...registry, method: 'POST', path: '/admin/model-registry/rollback', summary: 'Re-apply the previous registry refresh (409 when there is none)', success: { status: 200, schema: registryStatus } }),
  actorRoute(storeSync.snapshot, {
    role: 'admin', tags: ['sync'], method: 'POST', path: '/admin/sync/snapshot',
    summary: 'Write every key the data plane reads (masters, keys, flags, routing, then the layout version) to the shared store through the outbox, removing stale routing keys',
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: {
          status: { type: 'string' },
          reason: { type: 'string' },
          masters: { type: 'integer' },
          keys: { type: 'integer' },
          version: { type: 'integer' },
          groups: { type: 'integer' },
          binding_keys: { type: 'integer' },
          removed: { type: 'integer' },
          removed_binding_keys: names,
          removed_groups: { type: 'array', items: { type: 'integer' } },
        },
        required: ['status', 'masters', 'keys', 'version', 'groups', 'binding_keys', 'removed'],
      },
    },
  }),
];
