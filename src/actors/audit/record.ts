/**
 * Turns an audit event into its stored row: who (role and id, never a
 * secret), what (resource, id, action, derived from the route template), a
 * before/after pair with secrets masked and the diff between them.
 */
import type { AuditEvent } from './event.js';
import type { AuditRow } from '../../storage/clickhouse/audit.js';
import { chTime } from '../logs/record.js';
import { diffOf, maskSecrets } from './mask.js';

const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

/** `/admin/masters/{id}/freeze` → resource `masters`, action `freeze`; `/admin/api-keys/batch/status` → `api-keys`, `batch.status`. */
export function target(route: string, method: string): { resource: string; action: string } {
  const segments = route.split('/').filter(Boolean);
  const start = segments[0] === 'admin' || segments[0] === 'v1' || segments[0] === 'internal' ? 1 : 0;
  const resource = segments[start] ?? 'service';
  const literals = segments.slice(start + 1).filter((s) => !s.startsWith('{'));
  return { resource, action: literals.length ? literals.join('.') : (verbs[method] ?? method.toLowerCase()) };
}

function resourceId(event: AuditEvent): string {
  const fromPath = event.params.id ?? event.params.name ?? Object.values(event.params)[0];
  if (fromPath !== undefined) return String(fromPath);
  const after = event.after as { id?: unknown; name?: unknown } | null;
  if (after && typeof after === 'object' && (typeof after.id === 'number' || typeof after.id === 'string')) return String(after.id);
  return '';
}

export function auditRow(event: AuditEvent, now: number): AuditRow {
  const p = event.principal;
  const before = maskSecrets(event.before);
  const after = maskSecrets(event.after);
  return {
    time: chTime(now),
    request_id: event.requestId,
    actor_role: p.type,
    actor_id: p.type === 'master' || p.type === 'key' ? String(p.id) : '',
    ...target(event.route, event.method),
    resource_id: resourceId(event),
    method: event.method,
    route: event.route,
    status: event.status,
    before: before === null || before === undefined ? '' : JSON.stringify(before),
    after: after === null || after === undefined ? '' : JSON.stringify(after),
    diff: JSON.stringify(diffOf(before, after)),
  };
}
