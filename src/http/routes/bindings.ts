/** Namespaces and bindings (admin). */
import { actorRoute, type Route } from '../route.js';
import { timestamps } from '../schema.js';
import { pageOf } from '../../contract/page.js';
import { bindingFields, bindings, nsStatus } from '../../actors/upstreams/handles.js';


const namespaceView = {
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string' }, description: { type: 'string' }, status: nsStatus, createdAt: { type: 'string' }, updatedAt: { type: 'string' } },
  required: ['id', 'name', 'description', 'status', 'createdAt', 'updatedAt'],
};

const bindingView = {
  type: 'object',
  properties: { id: { type: 'integer' }, ...bindingFields, binding_key: { type: 'string' }, ...timestamps },
  required: ['id', 'namespace', 'public_model', 'binding_key', 'group_id', 'selector_type', 'selector_value', 'weight', 'status', 'createdAt', 'updatedAt', 'deletedAt'],
};

const nsAdmin = { role: 'admin' as const, tags: ['namespaces'] };
const bAdmin = { role: 'admin' as const, tags: ['bindings'] };

export const bindingRoutes: Route[] = [
  actorRoute(bindings.createNamespace, {
    ...nsAdmin, method: 'POST', path: '/admin/namespaces', summary: 'Create a namespace',
    success: { status: 201, schema: namespaceView },
  }),
  actorRoute(bindings.listNamespaces, {
    ...nsAdmin, method: 'GET', path: '/admin/namespaces', summary: 'List namespaces',
    success: { status: 200, schema: pageOf(namespaceView) },
  }),
  actorRoute(bindings.updateNamespace, {
    ...nsAdmin, method: 'PUT', path: '/admin/namespaces/{name}', summary: 'Update a namespace (description, status)',
    success: { status: 200, schema: namespaceView },
  }),
  actorRoute(bindings.createBinding, {
    ...bAdmin, method: 'POST', path: '/admin/bindings', summary: 'Create a binding; selector_value must resolve against the group models',
    success: { status: 201, schema: bindingView },
  }),
  actorRoute(bindings.listBindings, {
    ...bAdmin, method: 'GET', path: '/admin/bindings', summary: 'List bindings (search: bindingKey)',
    success: { status: 200, schema: pageOf(bindingView) },
  }),
  actorRoute(bindings.batchCreateBindings, {
    ...bAdmin, method: 'POST', path: '/admin/bindings/batch', summary: 'Create many bindings at once (all or none)',
    bodyLimit: 16 * 1024 * 1024,
    success: { status: 201, schema: { type: 'object', properties: { items: { type: 'array', items: bindingView }, total: { type: 'integer' } }, required: ['items', 'total'] } },
  }),
  actorRoute(bindings.batchBindingStatus, {
    ...bAdmin, method: 'PUT', path: '/admin/bindings/batch/status', summary: 'Set the status of many bindings',
    success: {
      status: 200,
      schema: { type: 'object', properties: { updated: { type: 'integer' }, ids: { type: 'array', items: { type: 'integer' } }, not_found: { type: 'array', items: { type: 'integer' } } }, required: ['updated', 'ids', 'not_found'] },
    },
  }),
  actorRoute(bindings.getBinding, { ...bAdmin, method: 'GET', path: '/admin/bindings/{id}', summary: 'Read a binding', success: { status: 200, schema: bindingView } }),
  actorRoute(bindings.updateBinding, {
    ...bAdmin, method: 'PUT', path: '/admin/bindings/{id}', summary: 'Update a binding (fields given)',
    success: { status: 200, schema: bindingView },
  }),
  actorRoute(bindings.deleteBinding, {
    ...bAdmin, method: 'DELETE', path: '/admin/bindings/{id}', summary: 'Delete a binding',
    success: { status: 200, schema: { type: 'object', properties: { id: { type: 'integer' }, deleted: { type: 'boolean' } }, required: ['id', 'deleted'] } },
  }),
];
