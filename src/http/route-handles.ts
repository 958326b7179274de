/**
 * The start-up check of the route table against the actors: every actor route
 * must point at a message its actor handles, or the service does not start
 * (a request would otherwise find out). One line names every such route.
 */
import { handleName } from '../contract/handle.js';
import { handleOf, isActorRoute, isRawRoute, type Route } from './route.js';

/** The routes (actor and raw) whose handle no actor answers, as `METHOD /path -> actor.message`. */
export function unansweredRoutes(routes: Route[], messages: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  for (const r of routes) {
    const h = isActorRoute(r) ? handleOf(r) : isRawRoute(r) ? r.ingests : undefined;
    if (!h) continue;
    if (!messages.get(h.actor)?.has(h.message)) out.push(`${r.method} ${r.path} -> ${handleName(h)}`);
  }
  return out;
}

/** The route table's start-up failure: the routes that point at no handler. */
export class RouteHandleError extends Error {}

export function checkRouteHandles(routes: Route[], messages: Map<string, Set<string>>): void {
  const missing = unansweredRoutes(routes, messages);
  if (missing.length) throw new RouteHandleError(`routes point at no handler: ${missing.join(', ')}`);
}
