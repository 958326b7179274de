/**
 * The message the audit actor records: one successful write, as the route
 * table saw it (src/http/audit.ts decides which requests send one).
 */
import type { Principal } from '../../contract/principal.js';

export interface AuditEvent {
  requestId: string;
  principal: Principal;
  method: string;
  /** The route template, e.g. /admin/masters/{id}/freeze. */
  route: string;
  params: Record<string, string>;
  status: number;
  before: unknown;
  after: unknown;
}
