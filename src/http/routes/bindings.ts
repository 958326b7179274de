/** Namespaces and bindings (admin). */
import type { Route } from '../route.js';
import { timestamps } from '../schema.js';
import { idParam } from '../../contract/params.js';
import { pageOf, pageQuery } from '../../contract/page.js';
import { bindingStatuses, namespaceStatuses } from '../../actors/upstreams/values.js';
import { selectorTypes } from '../../actors/upstreams/selector.js';

/** No dots: the bindingKey is namespace + "." + public_model and must split unambiguously. */
const namespaceName = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' };
const nsStatus = { type: 'string', enum: [...namespaceStatuses] };
const bStatus = { type: 'string', enum: [...bindingStatuses] };
const ids = { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'integer', minimum: 1 } };

const namespaceView = {
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string' }, description: { type: 'string' }, status: nsStatus, createdAt: { type: 'string' }, updatedAt: { type: 'string' } },
  required: ['id', 'name', 'description', 'status', 'createdAt', 'updatedAt'],
};

const bindingFields = {
  namespace: namespaceName,
  public_model: { type: 'string', minLength: 1, maxLength: 200 },
  group_id: { type: 'integer', minimum: 1 },
  selector_type: { type: 'string', enum: [...selectorTypes] },
  selector_value: { type: 'string', minLength: 1, maxLength: 200, description: 'default: public_model' },
  weight: { type: 'integer', minimum: 0, maximum: 1_000_000 },
  status: bStatus,
};
const bindingInput = { type: 'object', additionalProperties: false, required: ['namespace', 'public_model', 'group_id'], properties: bindingFields };
const bindingView = {
  type: 'object',
  properties: { id: { type: 'integer' }, ...bindingFields, binding_key: { type: 'string' }, ...timestamps },
  required: ['id', 'namespace', 'public_model', 'binding_key', 'group_id', 'selector_type', 'selector_value', 'weight', 'status', 'createdAt', 'updatedAt', 'deletedAt'],
};

const nsAdmin = { role: 'admin' as const, actor: 'bindings', tags: ['namespaces'] };
const bAdmin = { role: 'admin' as const, actor: 'bindings', tags: ['bindings'] };

export const bindingRoutes: Route[] = [
  {
    ...nsAdmin, method: 'POST', path: '/admin/namespaces', summary: 'Create a namespace',
    body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: namespaceName, description: { type: 'string', maxLength: 500 }, status: nsStatus } },
    success: { status: 201, schema: namespaceView }, message: 'createNamespace',
  },
  {
    ...nsAdmin, method: 'GET', path: '/admin/namespaces', summary: 'List namespaces',
    query: pageQuery({ status: nsStatus }), success: { status: 200, schema: pageOf(namespaceView) }, message: 'listNamespaces',
  },
  {
    ...nsAdmin, method: 'PUT', path: '/admin/namespaces/{name}', summary: 'Update a namespace (description, status)',
    params: { type: 'object', properties: { name: namespaceName }, required: ['name'] },
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { description: { type: 'string', maxLength: 500 }, status: nsStatus } },
    success: { status: 200, schema: namespaceView }, message: 'updateNamespace',
  },
  {
    ...bAdmin, method: 'POST', path: '/admin/bindings', summary: 'Create a binding; selector_value must resolve against the group models',
    body: bindingInput, success: { status: 201, schema: bindingView }, message: 'createBinding',
  },
  {
    ...bAdmin, method: 'GET', path: '/admin/bindings', summary: 'List bindings (search: bindingKey)',
    query: pageQuery({ namespace: namespaceName, group_id: { type: 'integer', minimum: 1 }, status: bStatus, public_model: { type: 'string', maxLength: 200 } }),
    success: { status: 200, schema: pageOf(bindingView) }, message: 'listBindings',
  },
  {
    ...bAdmin, method: 'POST', path: '/admin/bindings/batch', summary: 'Create many bindings at once (all or none)',
    body: { type: 'object', additionalProperties: false, required: ['items'], properties: { items: { type: 'array', minItems: 1, maxItems: 1000, items: bindingInput } } },
    bodyLimit: 16 * 1024 * 1024,
    success: { status: 201, schema: { type: 'object', properties: { items: { type: 'array', items: bindingView }, total: { type: 'integer' } }, required: ['items', 'total'] } },
    message: 'batchCreateBindings',
  },
  {
    ...bAdmin, method: 'PUT', path: '/admin/bindings/batch/status', summary: 'Set the status of many bindings',
    body: { type: 'object', additionalProperties: false, required: ['ids', 'status'], properties: { ids, status: bStatus } },
    success: {
      status: 200,
      schema: { type: 'object', properties: { updated: { type: 'integer' }, ids: { type: 'array', items: { type: 'integer' } }, not_found: { type: 'array', items: { type: 'integer' } } }, required: ['updated', 'ids', 'not_found'] },
    },
    message: 'batchBindingStatus',
  },
  { ...bAdmin, method: 'GET', path: '/admin/bindings/{id}', summary: 'Read a binding', params: idParam, success: { status: 200, schema: bindingView }, message: 'getBinding' },
  {
    ...bAdmin, method: 'PUT', path: '/admin/bindings/{id}', summary: 'Update a binding (fields given)',
    params: idParam, body: { type: 'object', additionalProperties: false, minProperties: 1, properties: bindingFields },
    success: { status: 200, schema: bindingView }, message: 'updateBinding',
  },
  {
    ...bAdmin, method: 'DELETE', path: '/admin/bindings/{id}', summary: 'Delete a binding', params: idParam,
    success: { status: 200, schema: { type: 'object', properties: { id: { type: 'integer' }, deleted: { type: 'boolean' } }, required: ['id', 'deleted'] } },
    message: 'deleteBinding',
  },
];
