/** Public endpoints: health, status, about. No credential. */
import type { HealthReport } from '../../actors/health/actor.js';
import { Reply, handlerRoute, type Route } from '../route.js';
import type { AppContext } from '../context.js';

/** A Go-style duration string: 3h4m5s. */
export function formatDuration(ms: number): string {
  let s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}

const uptime = (app: AppContext): string => formatDuration(Date.now() - app.startedAt);
const upDown = { type: 'string', enum: ['up', 'down'] };

export const publicRoutes: Route[] = [
  handlerRoute({
    method: 'GET',
    path: '/health',
    role: 'public',
    summary: 'Liveness, store health (503 when a store is down) and the log pipeline (degraded while inserts fail or dead letters wait)',
    tags: ['public'],
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: {
          status: { type: 'string' },
          database: upDown,
          store: upDown,
          clickhouse: upDown,
          log_pipeline: { type: 'string', enum: ['ok', 'degraded'] },
          uptime: { type: 'string' },
        },
        required: ['status', 'database', 'store', 'clickhouse', 'log_pipeline', 'uptime'],
      },
    },
    handler: async (_, app) => {
      const h = await app.ask<HealthReport>('health', 'check');
      const up = h.database && h.store && h.clickhouse;
      // A degraded pipeline still accepts (and keeps) every record: the node stays in service (200).
      const body = {
        status: up && h.logPipeline ? 'ok' : 'degraded',
        database: h.database ? 'up' : 'down',
        store: h.store ? 'up' : 'down',
        clickhouse: h.clickhouse ? 'up' : 'down',
        log_pipeline: h.logPipeline ? 'ok' : 'degraded',
        uptime: uptime(app),
      };
      return new Reply(up ? 200 : 503, body);
    },
  }),
  handlerRoute({
    method: 'GET',
    path: '/status',
    role: 'public',
    summary: 'Status, uptime and version',
    tags: ['public'],
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: { status: { type: 'string' }, uptime: { type: 'string' }, version: { type: 'string' } },
        required: ['status', 'uptime', 'version'],
      },
    },
    handler: (_, app) => ({ status: 'ok', uptime: uptime(app), version: app.build.version }),
  }),
  handlerRoute({
    method: 'GET',
    path: '/about',
    role: 'public',
    summary: 'Name, version, description and repository of the service',
    tags: ['public'],
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          version: { type: 'string' },
          description: { type: 'string' },
          repository: { type: 'string' },
          commit: { type: 'string' },
        },
        required: ['name', 'version', 'description', 'repository'],
      },
    },
    handler: (_, app) => app.build,
  }),
];
