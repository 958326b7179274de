/** Tenant self-service under /v1 (master key): the master's own child keys only. */
import { actorRoute, type Route } from '../route.js';
import { pageOf } from '../../contract/page.js';
import { childKeys } from '../../actors/tenancy/handles.js';
import { keyView, keyWithSecret } from './tenancy-schemas.js';

const tags = ['tenant'];
const base = { role: 'master' as const, tags };

export const tenantRoutes: Route[] = [
  actorRoute(childKeys.issue, {
    ...base, method: 'POST', path: '/v1/tokens',
    summary: 'Issue a child key (issued_by master); key_secret returned once; 403 for an inactive master or another group',
    success: { status: 201, schema: keyWithSecret },
  }),
  actorRoute(childKeys.list, { ...base, method: 'GET', path: '/v1/tokens', summary: 'List own child keys', success: { status: 200, schema: pageOf(keyView) } }),
  actorRoute(childKeys.get, { ...base, method: 'GET', path: '/v1/tokens/{id}', summary: 'Read an own child key', success: { status: 200, schema: keyView } }),
  actorRoute(childKeys.update, {
    ...base, method: 'PUT', path: '/v1/tokens/{id}',
    summary: 'Update an own child key', success: { status: 200, schema: keyView },
  }),
  actorRoute(childKeys.revoke, {
    ...base, method: 'POST', path: '/v1/tokens/{id}/revoke',
    summary: 'Revoke an own child key (final)', success: { status: 200, schema: keyView },
  }),
];
