/**
 * Alerts: admin creation, listing, reading, the status operations, statistics,
 * the data plane's reports, the detector's raises and the cleanup of closed
 * alerts. Every time written comes from the service clock.
 */
import { randomUUID } from 'node:crypto';
import { defineActor, implement } from '../runtime/actor.js';
import type { HandleInput } from '../../contract/handle.js';
import { alerts, type AlertBody } from './handles.js';
import { conflict, notFound } from '../../errors.js';
import { clampLimit } from '../../contract/page.js';
import {
  alertCounts,
  deleteClosedAlerts,
  getAlert,
  insertAlert,
  latestAlert,
  listAlerts,
  transitionAlert,
  type AlertFilter,
  type NewAlert,
} from '../../storage/postgres/alerts.js';
import { raiseAlerts } from './raise.js';
import { RETENTION_MS, severities, statuses, transitions, type Severity, type TransitionName } from './values.js';

const candidate = (b: AlertBody, source: NewAlert['source'], fingerprint = b.fingerprint!): NewAlert => ({
  type: b.type,
  severity: b.severity,
  fingerprint,
  message: b.message,
  metadata: b.metadata ?? {},
  master_id: b.master_id ?? null,
  source,
});

const iso = (ms: number) => new Date(ms).toISOString();

function transition(name: TransitionName) {
  const t = transitions[name];
  return async ({ params }: HandleInput<typeof alerts.acknowledge>, ctx: { db: import('slonik').DatabasePool; now(): number }) => {
    const row = await transitionAlert(ctx.db, params.id, t.from, t.to, t.stamp, iso(ctx.now()));
    if (row) return row;
    const current = await getAlert(ctx.db, params.id);
    if (!current) throw notFound('alert');
    throw conflict(`cannot ${name} an alert that is ${current.status}`, { status: current.status, allowed_from: [...t.from] });
  };
}

export default defineActor({
  name: 'alerts',
  placement: 'worker',
  handlers: {
    ...implement(alerts, {
      /** Admin creation: no cooldown, but one open alert per fingerprint (409 while one is open). */
      create: async ({ body }, ctx) => {
        const a = candidate(body, 'admin', body.fingerprint ?? `admin:${randomUUID()}`);
        const row = await insertAlert(ctx.db, a, iso(ctx.now()));
        if (row) return row;
        const open = await latestAlert(ctx.db, a.fingerprint);
        throw conflict('an open alert already holds this fingerprint', { fingerprint: 'is held by an open alert', alert_id: open?.id ?? null });
      },

      list: async ({ query }, ctx) => {
        const limit = clampLimit(query.limit);
        const { page, limit: _, ...filter } = query;
        const { items, total } = await listAlerts(ctx.db, filter, limit, (page - 1) * limit);
        return { items, total, page, limit };
      },

      get: async ({ params }, ctx) => {
        const row = await getAlert(ctx.db, params.id);
        if (!row) throw notFound('alert');
        return row;
      },

      acknowledge: transition('acknowledge'),
      resolve: transition('resolve'),
      dismiss: transition('dismiss'),

      stats: async (_, ctx) => {
        const by_status = Object.fromEntries(statuses.map((s) => [s, 0])) as Record<string, number>;
        const by_severity = Object.fromEntries(severities.map((s) => [s, 0])) as Record<string, number>;
        const open_by_severity = { ...by_severity };
        let total = 0;
        for (const { status, severity, n } of await alertCounts(ctx.db)) {
          total += n;
          by_status[status] = (by_status[status] ?? 0) + n;
          by_severity[severity] = (by_severity[severity] ?? 0) + n;
          if (status === 'active' || status === 'acknowledged') open_by_severity[severity] = (open_by_severity[severity] ?? 0) + n;
        }
        return { total, by_status, by_severity, open_by_severity };
      },

      /** POST /internal/alerts/report. */
      report: async ({ body }, ctx) => {
        const { accepted, deduplicated } = await raiseAlerts(ctx.db, body.alerts.map((a) => candidate(a, 'report')), ctx.now());
        return { accepted, deduplicated };
      },

    }),

    /** From the detector on the main thread. */
    raise: (alerts: NewAlert[], ctx) => raiseAlerts(ctx.db, alerts, ctx.now()),

    /** Deletes resolved and dismissed alerts closed more than 90 days ago. */
    cleanup: async (_: unknown, ctx) => ({ deleted: await deleteClosedAlerts(ctx.db, iso(ctx.now() - RETENTION_MS)) }),
  },
});
