/** The route table: every domain's declarations, and the documentation built from them. */
import type { Route } from '../route.js';
import { buildOpenApi } from '../openapi.js';
import { swaggerRoutes } from '../swagger.js';
import type { BuildInfo } from '../../version.js';
import { publicRoutes } from './public.js';
import { featureRoutes } from './features.js';

export function allRoutes(build: BuildInfo): Route[] {
  const routes: Route[] = [...publicRoutes, ...featureRoutes];
  routes.push(...swaggerRoutes(() => buildOpenApi(routes, build)));
  return routes;
}
