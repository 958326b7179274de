/** Prometheus metrics, for the internal or the admin token. */
import { handlerRoute, type Route } from '../route.js';

export const metricsRoutes: Route[] = [
  handlerRoute({
    method: 'GET',
    path: '/metrics',
    role: 'admin_or_internal',
    summary: 'Prometheus metrics (text exposition format); X-Internal-Token or the admin bearer token',
    tags: ['operability'],
    produces: 'text/plain; version=0.0.4; charset=utf-8',
    success: { status: 200, schema: { type: 'string' } },
    handler: (_, app) => app.ask<string>('metrics', 'render'),
  }),
];
