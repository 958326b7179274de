/** Runtime feature flags (admin). */
import { features } from '../../actors/features/handles.js';
import { actorRoute, type Route } from '../route.js';

const flagsView = {
  type: 'object',
  properties: {
    dp_state_store_backend: { type: 'string' },
    dp_proto_cross_upstream: { type: 'boolean' },
    log_request_body_enabled: { type: 'boolean' },
    log_retention_days: { type: 'integer' },
    log_max_records: { type: 'integer' },
    log_body_retention_days: { type: 'integer' },
  },
  required: ['dp_state_store_backend', 'dp_proto_cross_upstream', 'log_request_body_enabled', 'log_retention_days', 'log_max_records', 'log_body_retention_days'],
};

export const featureRoutes: Route[] = [
  actorRoute(features.get, {
    method: 'GET',
    path: '/admin/features',
    role: 'admin',
    summary: 'All feature flags with their effective values, log overrides included',
    tags: ['features'],
    success: { status: 200, schema: flagsView },
  }),
  actorRoute(features.update, {
    method: 'PUT',
    path: '/admin/features',
    role: 'admin',
    summary: 'Set flags (object of flag name to value); 0 clears a log override',
    tags: ['features'],
    success: { status: 200, schema: flagsView },
  }),
];
