/**
 * Turns route declarations into what the server runs: ajv validators and a
 * fast-json-stringify serializer per route, compiled once at start.
 */
import type { ValidateFunction } from 'ajv';
import { compileSerializer } from './schema.js';
import { compileBody, compileParams } from '../contract/validate.js';
import { handleOf, isActorRoute, isRawRoute, type Route } from './route.js';

export const defaultBodyLimit = 1024 * 1024;

export interface CompiledRoute {
  route: Route;
  bodyLimit: number;
  /** The body's bytes go to the actor as they are (its handle's parser is `bytes`). */
  bodyToWorker: boolean;
  validateParams?: ValidateFunction;
  validateQuery?: ValidateFunction;
  validateBody?: ValidateFunction;
  serialize: (data: unknown) => string;
}

const empty = (): string => '';

export function compileRoutes(routes: Route[]): CompiledRoute[] {
  return routes.map((route) => {
    const compiled: CompiledRoute = {
      route,
      bodyLimit: route.bodyLimit ?? defaultBodyLimit,
      bodyToWorker: isActorRoute(route) && handleOf(route).input.parser === 'bytes',
      serialize: route.success.schema ? compileSerializer(route.success.schema) : empty,
    };
    if (route.params) compiled.validateParams = compileParams(route.params);
    if (route.query) compiled.validateQuery = compileParams(route.query);
    if (route.body && !isRawRoute(route) && !compiled.bodyToWorker) compiled.validateBody = compileBody(route.body);
    return compiled;
  });
}
