/** The audit trail (admin). */
import { actorRoute, type Route } from '../route.js';
import { audit } from '../../actors/audit/handles.js';

const str = { type: 'string' };
const int = { type: 'integer' };
const any = {};

export const auditRoutes: Route[] = [
  actorRoute(audit.list, {
    method: 'GET',
    path: '/admin/audit',
    role: 'admin',
    summary: 'Who changed what: every admin and tenant write, newest first, secrets masked; by time window, resource and action (chart markers)',
    tags: ['operability'],
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
  }),
];
