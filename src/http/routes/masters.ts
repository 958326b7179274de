/** Admin operations on masters (tenants), their child keys, and admin key access settings. */
import { actorRoute, type Route } from '../route.js';
import { pageOf } from '../../contract/page.js';
import type { Handle } from '../../contract/handle.js';
import type { JSONSchema } from '../../contract/validate.js';
import { childKeys, masters } from '../../actors/tenancy/handles.js';
import { keyView, keyWithSecret, masterView, masterWithKey } from './tenancy-schemas.js';

const tags = ['masters'];
const ok = (schema: JSONSchema) => ({ status: 200, schema });
const onMaster = (method: Route['method'], path: string, summary: string, handle: Handle, schema: JSONSchema = masterView): Route =>
  actorRoute(handle, { method, path, role: 'admin', summary, tags, success: ok(schema) });

export const masterRoutes: Route[] = [
  actorRoute(masters.create, {
    method: 'POST', path: '/admin/masters', role: 'admin', tags,
    summary: 'Create a master; the master key is returned in this response only',
    success: { status: 201, schema: masterWithKey },
  }),
  actorRoute(masters.list, {
    method: 'GET', path: '/admin/masters', role: 'admin', tags,
    summary: 'List live masters (search matches name and group)',
    success: ok(pageOf(masterView)),
  }),
  // GET /admin/masters/{id} embeds realtime figures: declared in analytics.ts.
  onMaster('PUT', '/admin/masters/{id}', 'Update name, group, max_child_keys, global_qps, budget, budget_period', masters.update),
  onMaster('DELETE', '/admin/masters/{id}', 'Soft-delete a master; its epoch rises so every child key fails', masters.remove),
  onMaster('POST', '/admin/masters/{id}/freeze', 'Suspend a master: its key and all its child keys are refused', masters.freeze),
  onMaster('POST', '/admin/masters/{id}/unfreeze', 'Reactivate a suspended master', masters.unfreeze),
  onMaster('POST', '/admin/masters/{id}/reset-key', 'New master key (returned once); epoch rises so older child keys fail', masters.resetKey, masterWithKey),
  onMaster('PUT', '/admin/masters/{id}/access', 'Default and allowed namespaces; propagate applies them to existing keys', masters.access, {
    ...masterView,
    properties: { ...(masterView as { properties: object }).properties, propagated_keys: { type: 'integer' } },
  }),
  onMaster('GET', '/admin/masters/{id}/keys', 'List the child keys of a master', masters.listKeys, pageOf(keyView)),
  {
    ...onMaster('POST', '/admin/masters/{id}/keys', 'Issue a child key (issued_by admin); key_secret returned once', masters.issueKey, keyWithSecret),
    success: { status: 201, schema: keyWithSecret },
  },
  actorRoute(masters.revokeKey, {
    method: 'POST', path: '/admin/masters/{id}/keys/{keyId}/revoke', role: 'admin', tags,
    summary: 'Revoke a child key of this master (final)', success: ok(keyView),
  }),
  actorRoute(childKeys.adminGet, {
    method: 'GET', path: '/admin/keys/{id}', role: 'admin', tags,
    summary: 'Read any child key', success: ok(keyView),
  }),
  actorRoute(childKeys.update, {
    method: 'PUT', path: '/admin/keys/{id}', role: 'admin', tags,
    summary: "Update any master's child key: limits, expiry, IPs, status (suspended to suspend, active to resume)",
    success: ok(keyView),
  }),
  actorRoute(childKeys.adminAccess, {
    method: 'PUT', path: '/admin/keys/{id}/access', role: 'admin', tags,
    summary: 'Default and allowed namespaces of one key (within what its master allows)',
    success: ok(keyView),
  }),
  actorRoute(childKeys.adminBudget, {
    method: 'PUT', path: '/admin/keys/{id}/budget', role: 'admin', tags,
    summary: 'Budget and budget period of one key (docs/spend.md); a new period starts at its current UTC boundary',
    success: ok(keyView),
  }),
];
