/**
 * The audit trail on the main thread beside ClickHouse: events arrive with
 * every admin or tenant write, are batched, and stored in `audit_log`; reads
 * flush first so a write is visible in the trail as soon as it answered.
 */
import { implement, type ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { audit } from './handles.js';
import type { AuditEvent } from './event.js';
import { Batcher } from '../runtime/batcher.js';
import { clampLimit } from '../../contract/page.js';
import { badRequest } from '../../errors.js';
import { insertAudit, listAudit, setAuditRetention, type AuditRow } from '../../storage/clickhouse/audit.js';
import { auditRow } from './record.js';

export function auditActor(): ActorDefinition<MainContext> {
  let batcher: Batcher<AuditRow> | undefined;
  return {
    name: 'audit',
    placement: 'main',
    concurrency: 64,
    handlers: {
      record: (event: AuditEvent, ctx) => {
        batcher!.add(auditRow(event, ctx.now()));
      },

      ...implement<typeof audit, MainContext>(audit, {
        list: async ({ query: q }, ctx) => {
          if (q.since !== undefined && q.until !== undefined && q.until <= q.since) {
            throw badRequest('until must be after since', { until: 'must be greater than since' });
          }
          // `actor` is a role (admin) or role:id (master:12).
          const [role, id] = typeof q.actor === 'string' ? q.actor.split(':') : [];
          await batcher!.flush();
          const limit = clampLimit(q.limit);
          const offset = q.offset ?? 0;
          const { items, total } = await listAudit(
            ctx.clickhouse,
            {
              resource: typeof q.resource === 'string' ? q.resource.split(',') : undefined,
              action: typeof q.action === 'string' ? q.action.split(',') : undefined,
              resource_id: q.resource_id,
              actor_role: role,
              actor_id: id,
              since: q.since,
              until: q.until,
            },
            limit,
            offset,
          );
          const parse = (s: string): unknown => (s ? JSON.parse(s) : null);
          return {
            items: items.map((r) => ({ ...r, before: parse(r.before), after: parse(r.after), diff: parse(r.diff) })),
            total,
            limit,
            offset,
          };
        },
      }),
    },
    async start(ctx) {
      await setAuditRetention(ctx.clickhouse, ctx.config.auditRetentionDays);
      batcher = new Batcher<AuditRow>(
        {
          maxItems: 1000,
          maxBytes: 4 * 1024 * 1024,
          maxDelayMs: 1000,
          onError: (err) => ctx.log.error({ err }, 'audit records could not be stored'),
        },
        (rows) => insertAudit(ctx.clickhouse, rows),
      );
    },
    async stop() {
      await batcher?.flush();
    },
  };
}
