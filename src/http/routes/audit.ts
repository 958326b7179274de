/** The audit trail (admin). */
import type { Route } from '../route.js';
import { unixTime } from '../../contract/value-rules.js';

const str = { type: 'string' };
const int = { type: 'integer' };
const any = {};
/** A name or a comma-separated list of them (resources and actions are plain words). */
const names = { type: 'string', maxLength: 500, pattern: '^[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*$' };

export const auditRoutes: Route[] = [
  {
    method: 'GET',
    path: '/admin/audit',
    role: 'admin',
    summary: 'Who changed what: every admin and tenant write, newest first, secrets masked; by time window, resource and action (chart markers)',
    tags: ['operability'],
    query: {
      type: 'object',
      properties: {
        resource: { ...names, description: 'one resource or several, comma-separated: e.g. masters, api-keys, features, models, bindings' },
        action: { ...names, description: 'one action or several, comma-separated: create, update, delete, freeze, batch.status, ...' },
        resource_id: { type: 'string', maxLength: 200 },
        actor: { type: 'string', maxLength: 100, pattern: '^(admin|master(:\\d+)?)$', description: '`admin`, `master` or `master:<id>`' },
        since: unixTime('Unix seconds, inclusive'),
        until: unixTime('Unix seconds, exclusive'),
        limit: { type: 'integer', minimum: 1, default: 50, description: 'at most 200' },
        offset: { type: 'integer', minimum: 0, default: 0 },
      },
    },
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: {
          items: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                time: str, request_id: str, actor_role: str, actor_id: str, resource: str, resource_id: str,
                action: str, method: str, route: str, status: int, before: any, after: any, diff: any,
              },
            },
          },
          total: int,
          limit: int,
          offset: int,
        },
        required: ['items', 'total', 'limit', 'offset'],
      },
    },
    actor: 'audit',
    message: 'list',
  },
];
