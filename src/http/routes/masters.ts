/** Admin operations on masters (tenants), their child keys, and admin key access settings. */
import type { Route } from '../route.js';
import { idParam } from '../schema.js';
import { pageOf, pageQuery } from '../../contract/page.js';
import type { JSONSchema } from '../../contract/validate.js';
import {
  keyAccessBody, keyBudgetBody, keyIssueBody, keyUpdateBody, keyView, keyWithSecret, masterAccessBody, masterCreateBody, masterUpdateBody, masterView,
  masterWithKey,
} from './tenancy-schemas.js';

const tags = ['masters'];
const keyParams = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1 }, keyId: { type: 'integer', minimum: 1 } },
  required: ['id', 'keyId'],
};
const ok = (schema: JSONSchema) => ({ status: 200, schema });
const onMaster = (method: Route['method'], path: string, summary: string, message: string, schema: JSONSchema = masterView): Route => ({
  method, path, role: 'admin', summary, tags, params: idParam, success: ok(schema), actor: 'masters', message,
});

export const masterRoutes: Route[] = [
  {
    method: 'POST', path: '/admin/masters', role: 'admin', tags, body: masterCreateBody,
    summary: 'Create a master; the master key is returned in this response only',
    success: { status: 201, schema: masterWithKey }, actor: 'masters', message: 'create',
  },
  {
    method: 'GET', path: '/admin/masters', role: 'admin', tags, query: pageQuery(),
    summary: 'List live masters (search matches name and group)',
    success: ok(pageOf(masterView)), actor: 'masters', message: 'list',
  },
  // GET /admin/masters/{id} embeds realtime figures: declared in analytics.ts.
  { ...onMaster('PUT', '/admin/masters/{id}', 'Update name, group, max_child_keys, global_qps, budget, budget_period', 'update'), body: masterUpdateBody },
  onMaster('DELETE', '/admin/masters/{id}', 'Soft-delete a master; its epoch rises so every child key fails', 'remove'),
  onMaster('POST', '/admin/masters/{id}/freeze', 'Suspend a master: its key and all its child keys are refused', 'freeze'),
  onMaster('POST', '/admin/masters/{id}/unfreeze', 'Reactivate a suspended master', 'unfreeze'),
  onMaster('POST', '/admin/masters/{id}/reset-key', 'New master key (returned once); epoch rises so older child keys fail', 'resetKey', masterWithKey),
  {
    ...onMaster('PUT', '/admin/masters/{id}/access', 'Default and allowed namespaces; propagate applies them to existing keys', 'access', {
      ...masterView,
      properties: { ...(masterView as { properties: object }).properties, propagated_keys: { type: 'integer' } },
    }),
    body: masterAccessBody,
  },
  {
    ...onMaster('GET', '/admin/masters/{id}/keys', 'List the child keys of a master', 'listKeys', pageOf(keyView)),
    query: pageQuery(),
  },
  {
    ...onMaster('POST', '/admin/masters/{id}/keys', 'Issue a child key (issued_by admin); key_secret returned once', 'issueKey', keyWithSecret),
    body: keyIssueBody,
    success: { status: 201, schema: keyWithSecret },
  },
  {
    method: 'POST', path: '/admin/masters/{id}/keys/{keyId}/revoke', role: 'admin', tags, params: keyParams,
    summary: 'Revoke a child key of this master (final)', success: ok(keyView), actor: 'masters', message: 'revokeKey',
  },
  {
    method: 'GET', path: '/admin/keys/{id}', role: 'admin', tags, params: idParam,
    summary: 'Read any child key', success: ok(keyView), actor: 'child-keys', message: 'adminGet',
  },
  {
    method: 'PUT', path: '/admin/keys/{id}', role: 'admin', tags, params: idParam, body: keyUpdateBody,
    summary: "Update any master's child key: limits, expiry, IPs, status (suspended to suspend, active to resume)",
    success: ok(keyView), actor: 'child-keys', message: 'update',
  },
  {
    method: 'PUT', path: '/admin/keys/{id}/access', role: 'admin', tags, params: idParam, body: keyAccessBody,
    summary: 'Default and allowed namespaces of one key (within what its master allows)',
    success: ok(keyView), actor: 'child-keys', message: 'adminAccess',
  },
  {
    method: 'PUT', path: '/admin/keys/{id}/budget', role: 'admin', tags, params: idParam, body: keyBudgetBody,
    summary: 'Budget and budget period of one key (docs/spend.md); a new period starts at its current UTC boundary',
    success: ok(keyView), actor: 'child-keys', message: 'adminBudget',
  },
];
