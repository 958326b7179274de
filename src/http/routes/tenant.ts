/** Tenant self-service under /v1 (master key): the master's own child keys only. */
import type { Route } from '../route.js';
import { idParam } from '../schema.js';
import { pageOf, pageQuery } from '../../contract/page.js';
import { keyIssueBody, keyUpdateBody, keyView, keyWithSecret } from './tenancy-schemas.js';

const tags = ['tenant'];
const base = { role: 'master' as const, tags, actor: 'child-keys' };

export const tenantRoutes: Route[] = [
  {
    ...base, method: 'POST', path: '/v1/tokens', body: keyIssueBody, message: 'issue',
    summary: 'Issue a child key (issued_by master); key_secret returned once; 403 for an inactive master or another group',
    success: { status: 201, schema: keyWithSecret },
  },
  { ...base, method: 'GET', path: '/v1/tokens', query: pageQuery(), message: 'list', summary: 'List own child keys', success: { status: 200, schema: pageOf(keyView) } },
  { ...base, method: 'GET', path: '/v1/tokens/{id}', params: idParam, message: 'get', summary: 'Read an own child key', success: { status: 200, schema: keyView } },
  {
    ...base, method: 'PUT', path: '/v1/tokens/{id}', params: idParam, body: keyUpdateBody, message: 'update',
    summary: 'Update an own child key', success: { status: 200, schema: keyView },
  },
  {
    ...base, method: 'POST', path: '/v1/tokens/{id}/revoke', params: idParam, message: 'revoke',
    summary: 'Revoke an own child key (final)', success: { status: 200, schema: keyView },
  },
];
