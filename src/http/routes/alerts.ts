/** Alerts, alert thresholds, the log-error webhook configuration and the data plane's alert reports. */
import { severities, statuses } from '../../contract/alert-values.js';
import { actorRoute, type Route } from '../route.js';
import { pageOf } from '../../contract/page.js';
import type { Handle } from '../../contract/handle.js';
import { alertConfig, alerts, metadata, thresholdFields, webhookFields } from '../../actors/alerts/handles.js';
import type { JSONSchema } from '../../contract/validate.js';

const nullableTime: JSONSchema = { type: ['string', 'null'] };

const alertView: JSONSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    type: { type: 'string' },
    severity: { type: 'string' },
    status: { type: 'string' },
    fingerprint: { type: 'string' },
    message: { type: 'string' },
    metadata,
    master_id: { type: ['integer', 'null'] },
    source: { type: 'string' },
    occurrences: { type: 'integer' },
    last_seen_at: { type: 'string' },
    acknowledged_at: nullableTime,
    resolved_at: nullableTime,
    dismissed_at: nullableTime,
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
  required: ['id', 'type', 'severity', 'status', 'fingerprint', 'message', 'metadata', 'master_id', 'source', 'occurrences', 'createdAt', 'updatedAt'],
};

const counts = (keys: readonly string[]): JSONSchema => ({
  type: 'object',
  properties: Object.fromEntries(keys.map((k) => [k, { type: 'integer' }])),
  required: [...keys],
});

const statsView: JSONSchema = {
  type: 'object',
  properties: {
    total: { type: 'integer' },
    by_status: counts(statuses),
    by_severity: counts(severities),
    open_by_severity: counts(severities),
  },
  required: ['total', 'by_status', 'by_severity', 'open_by_severity'],
};

const thresholdsView: JSONSchema = {
  type: 'object',
  properties: { ...thresholdFields, updatedAt: { type: 'string' } },
  required: [...Object.keys(thresholdFields), 'updatedAt'],
};

const webhookView: JSONSchema = {
  type: 'object',
  properties: { ...webhookFields, status_code_threshold: { type: 'integer' }, secret_set: { type: 'boolean' }, updatedAt: { type: 'string' } },
  required: [...Object.keys(webhookFields), 'secret_set', 'updatedAt'],
};

const deliveryView: JSONSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    trigger_id: { type: 'string' },
    attempt: { type: 'integer' },
    url: { type: 'string' },
    count: { type: 'integer' },
    ok: { type: 'boolean' },
    status_code: { type: ['integer', 'null'] },
    error: { type: 'string' },
    duration_ms: { type: 'integer' },
    createdAt: { type: 'string' },
  },
  required: ['id', 'trigger_id', 'attempt', 'url', 'count', 'ok', 'status_code', 'error', 'duration_ms', 'createdAt'],
};

const onAlert = (path: string, summary: string, handle: Handle): Route =>
  actorRoute(handle, {
    method: 'POST',
    path: `/admin/alerts/{id}/${path}`,
    role: 'admin',
    summary,
    tags: ['alerts'],
    success: { status: 200, schema: alertView },
  });

export const alertRoutes: Route[] = [
  actorRoute(alerts.create, {
    method: 'POST',
    path: '/admin/alerts',
    role: 'admin',
    summary: 'Create an alert; 409 while an open alert holds the fingerprint (a unique one is generated when omitted)',
    tags: ['alerts'],
    success: { status: 201, schema: alertView },
  }),
  actorRoute(alerts.list, {
    method: 'GET',
    path: '/admin/alerts',
    role: 'admin',
    summary: 'List alerts, newest first, filtered by status, severity, type, master_id; search in message and fingerprint',
    tags: ['alerts'],
    success: { status: 200, schema: pageOf(alertView) },
  }),
  actorRoute(alerts.stats, {
    method: 'GET',
    path: '/admin/alerts/stats',
    role: 'admin',
    summary: 'Alert counts by status and by severity (all alerts, and open ones)',
    tags: ['alerts'],
    success: { status: 200, schema: statsView },
  }),
  actorRoute(alertConfig.getThresholds, {
    method: 'GET',
    path: '/admin/alerts/thresholds',
    role: 'admin',
    summary: 'The traffic-spike thresholds (created with defaults on first use; 0 disables a check)',
    tags: ['alerts'],
    success: { status: 200, schema: thresholdsView },
  }),
  actorRoute(alertConfig.updateThresholds, {
    method: 'PUT',
    path: '/admin/alerts/thresholds',
    role: 'admin',
    summary: 'Change some or all thresholds',
    tags: ['alerts'],
    success: { status: 200, schema: thresholdsView },
  }),
  actorRoute(alerts.get, {
    method: 'GET',
    path: '/admin/alerts/{id}',
    role: 'admin',
    summary: 'One alert',
    tags: ['alerts'],
    success: { status: 200, schema: alertView },
  }),
  onAlert('acknowledge', 'active → acknowledged; 409 from any other status', alerts.acknowledge),
  onAlert('resolve', 'acknowledged → resolved; 409 from any other status', alerts.resolve),
  onAlert('dismiss', 'active or acknowledged → dismissed; 409 from resolved or dismissed', alerts.dismiss),
  actorRoute(alertConfig.getWebhook, {
    method: 'GET',
    path: '/admin/logs/webhook',
    role: 'admin',
    summary: 'The log-error webhook configuration (the secret shows only as secret_set)',
    tags: ['alerts'],
    success: { status: 200, schema: webhookView },
  }),
  actorRoute(alertConfig.updateWebhook, {
    method: 'PUT',
    path: '/admin/logs/webhook',
    role: 'admin',
    summary: 'Change the log-error webhook configuration; secret null or "" removes it',
    tags: ['alerts'],
    success: { status: 200, schema: webhookView },
  }),
  actorRoute(alertConfig.deliveries, {
    method: 'GET',
    path: '/admin/logs/webhook/deliveries',
    role: 'admin',
    summary: 'The latest webhook delivery attempts (100 kept), newest first',
    tags: ['alerts'],
    success: { status: 200, schema: pageOf(deliveryView) },
  }),
  actorRoute(alerts.report, {
    method: 'POST',
    path: '/internal/alerts/report',
    role: 'internal',
    summary: 'Alerts reported by the data plane; a fingerprint open or raised within 5 minutes is dropped and counted',
    tags: ['alerts', 'internal'],
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: { accepted: { type: 'integer' }, deduplicated: { type: 'integer' } },
        required: ['accepted', 'deduplicated'],
      },
    },
  }),
];
