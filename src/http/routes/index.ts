/** The route table: every domain's declarations, and the documentation built from them. */
import type { Route } from '../route.js';
import { buildOpenApi } from '../openapi.js';
import { swaggerRoutes } from '../swagger.js';
import { consoleRoutes } from '../console.js';
import type { BuildInfo } from '../../version.js';
import { publicRoutes } from './public.js';
import { featureRoutes } from './features.js';
import { upstreamRoutes } from './upstreams.js';
import { bindingRoutes } from './bindings.js';
import { modelRoutes } from './models.js';
import { masterRoutes } from './masters.js';
import { tenantRoutes } from './tenant.js';
import { whoamiRoutes } from './whoami.js';
import { usageRoutes } from './usage.js';
import { logRoutes } from './logs.js';
import { logExportRoutes } from './log-export.js';
import { logFilterRoutes } from './log-filters.js';
import { alertRoutes } from './alerts.js';
import { metricsRoutes } from './metrics.js';
import { syncRoutes } from './sync.js';
import { auditRoutes } from './audit.js';
import { analyticsRoutes } from './analytics.js';
import { spendRoutes } from './spend.js';

export function allRoutes(build: BuildInfo): Route[] {
  const routes: Route[] = [...publicRoutes, ...featureRoutes, ...upstreamRoutes, ...bindingRoutes, ...modelRoutes, ...logRoutes];
  routes.push(...masterRoutes, ...tenantRoutes, ...whoamiRoutes, ...usageRoutes);
  routes.push(...metricsRoutes, ...syncRoutes, ...auditRoutes);
  routes.push(...alertRoutes);
  routes.push(...analyticsRoutes);
  routes.push(...logExportRoutes, ...logFilterRoutes);
  routes.push(...spendRoutes);
  routes.push(...swaggerRoutes(() => buildOpenApi(routes, build)));
  routes.push(...consoleRoutes());
  return routes;
}
