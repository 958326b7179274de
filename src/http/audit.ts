/**
 * Which requests the audit trail records, and where their "before" state is
 * read: every successful write (not GET) by an admin or a tenant, through the
 * route table itself, so a new endpoint is audited without further code.
 * The audit actor turns the event into a masked, diffed record.
 */
import type { Principal } from '../contract/principal.js';
import { isRawRoute, type Route } from './route.js';

export const isAuditedWrite = (route: Route, principal: Principal): boolean =>
  route.method !== 'GET' && !isRawRoute(route) && (principal.type === 'admin' || principal.type === 'master');

/**
 * The concrete path whose GET shows the state a write changes: the same path
 * for `/things/{id}` and for singletons (PUT without parameters), the resource
 * for an action on it (`/things/{id}/freeze` → `/things/{id}`), none otherwise
 * (a create has no before).
 */
export function readPathFor(route: Route, path: string): string | null {
  const template = route.path.split('/');
  const concrete = path.split('/');
  const last = template.length - 1;
  if (template[last]!.startsWith('{')) return path;
  if (route.method === 'PUT' && !route.path.includes('{')) return path;
  for (let i = last - 1; i > 0; i--) {
    if (template[i]!.startsWith('{')) return concrete.slice(0, i + 1).join('/');
  }
  return null;
}
