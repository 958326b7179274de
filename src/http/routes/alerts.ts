/** Alerts, alert thresholds, the log-error webhook configuration and the data plane's alert reports. */
import { alertTypes, severities, statuses } from '../../actors/alerts/values.js';
import type { Route } from '../route.js';
import { idParam } from '../../contract/params.js';
import { pageOf, pageQuery } from '../../contract/page.js';
import type { JSONSchema } from '../../contract/validate.js';

const nullableTime: JSONSchema = { type: ['string', 'null'] };
const metadata: JSONSchema = { type: 'object', additionalProperties: true, maxProperties: 100 };

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

/** One alert as the admin or the data plane sends it; fingerprint is optional for the admin only. */
const alertInput = (fingerprintRequired: boolean): JSONSchema => ({
  type: 'object',
  additionalProperties: false,
  required: ['type', 'severity', 'message', ...(fingerprintRequired ? ['fingerprint'] : [])],
  properties: {
    type: { type: 'string', enum: [...alertTypes] },
    severity: { type: 'string', enum: [...severities] },
    fingerprint: { type: 'string', minLength: 1, maxLength: 200 },
    message: { type: 'string', minLength: 1, maxLength: 2000 },
    metadata,
    master_id: { type: 'integer', minimum: 1 },
  },
});

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

const limit = (max: number): JSONSchema => ({ type: 'integer', minimum: 0, maximum: max });
const thresholdFields = {
  global_qps: limit(2_147_483_647),
  master_rpm: limit(2_147_483_647),
  master_tpm: limit(Number.MAX_SAFE_INTEGER),
  master_rpd: limit(Number.MAX_SAFE_INTEGER),
  master_tpd: limit(Number.MAX_SAFE_INTEGER),
  min_samples: limit(2_147_483_647),
};
const thresholdsView: JSONSchema = {
  type: 'object',
  properties: { ...thresholdFields, updatedAt: { type: 'string' } },
  required: [...Object.keys(thresholdFields), 'updatedAt'],
};

const webhookFields: Record<string, JSONSchema> = {
  enabled: { type: 'boolean' },
  url: { type: 'string', maxLength: 2000 },
  threshold: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
  window_seconds: { type: 'integer', minimum: 1, maximum: 86_400 },
  cooldown_seconds: { type: 'integer', minimum: 0, maximum: 604_800 },
  // 0 turns the status-code criterion off; below 400 a record is no error-looking record at all.
  status_code_threshold: { anyOf: [{ const: 0 }, { type: 'integer', minimum: 400, maximum: 999 }] },
  detect_error_message: { type: 'boolean' },
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

const onAlert = (path: string, summary: string, message: string): Route => ({
  method: 'POST',
  path: `/admin/alerts/{id}/${path}`,
  role: 'admin',
  summary,
  tags: ['alerts'],
  params: idParam,
  success: { status: 200, schema: alertView },
  actor: 'alerts',
  message,
});

export const alertRoutes: Route[] = [
  {
    method: 'POST',
    path: '/admin/alerts',
    role: 'admin',
    summary: 'Create an alert; 409 while an open alert holds the fingerprint (a unique one is generated when omitted)',
    tags: ['alerts'],
    body: alertInput(false),
    success: { status: 201, schema: alertView },
    actor: 'alerts',
    message: 'create',
  },
  {
    method: 'GET',
    path: '/admin/alerts',
    role: 'admin',
    summary: 'List alerts, newest first, filtered by status, severity, type, master_id; search in message and fingerprint',
    tags: ['alerts'],
    query: pageQuery({
      status: { type: 'string', enum: [...statuses] },
      severity: { type: 'string', enum: [...severities] },
      type: { type: 'string', enum: [...alertTypes] },
      master_id: { type: 'integer', minimum: 1 },
    }),
    success: { status: 200, schema: pageOf(alertView) },
    actor: 'alerts',
    message: 'list',
  },
  {
    method: 'GET',
    path: '/admin/alerts/stats',
    role: 'admin',
    summary: 'Alert counts by status and by severity (all alerts, and open ones)',
    tags: ['alerts'],
    success: { status: 200, schema: statsView },
    actor: 'alerts',
    message: 'stats',
  },
  {
    method: 'GET',
    path: '/admin/alerts/thresholds',
    role: 'admin',
    summary: 'The traffic-spike thresholds (created with defaults on first use; 0 disables a check)',
    tags: ['alerts'],
    success: { status: 200, schema: thresholdsView },
    actor: 'alert-config',
    message: 'getThresholds',
  },
  {
    method: 'PUT',
    path: '/admin/alerts/thresholds',
    role: 'admin',
    summary: 'Change some or all thresholds',
    tags: ['alerts'],
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: thresholdFields },
    success: { status: 200, schema: thresholdsView },
    actor: 'alert-config',
    message: 'updateThresholds',
  },
  {
    method: 'GET',
    path: '/admin/alerts/{id}',
    role: 'admin',
    summary: 'One alert',
    tags: ['alerts'],
    params: idParam,
    success: { status: 200, schema: alertView },
    actor: 'alerts',
    message: 'get',
  },
  onAlert('acknowledge', 'active → acknowledged; 409 from any other status', 'acknowledge'),
  onAlert('resolve', 'acknowledged → resolved; 409 from any other status', 'resolve'),
  onAlert('dismiss', 'active or acknowledged → dismissed; 409 from resolved or dismissed', 'dismiss'),
  {
    method: 'GET',
    path: '/admin/logs/webhook',
    role: 'admin',
    summary: 'The log-error webhook configuration (the secret shows only as secret_set)',
    tags: ['alerts'],
    success: { status: 200, schema: webhookView },
    actor: 'alert-config',
    message: 'getWebhook',
  },
  {
    method: 'PUT',
    path: '/admin/logs/webhook',
    role: 'admin',
    summary: 'Change the log-error webhook configuration; secret null or "" removes it',
    tags: ['alerts'],
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { ...webhookFields, secret: { type: ['string', 'null'], maxLength: 256 } },
    },
    success: { status: 200, schema: webhookView },
    actor: 'alert-config',
    message: 'updateWebhook',
  },
  {
    method: 'GET',
    path: '/admin/logs/webhook/deliveries',
    role: 'admin',
    summary: 'The latest webhook delivery attempts (100 kept), newest first',
    tags: ['alerts'],
    query: {
      type: 'object',
      properties: { page: { type: 'integer', minimum: 1, default: 1 }, limit: { type: 'integer', minimum: 1, default: 50 } },
    },
    success: { status: 200, schema: pageOf(deliveryView) },
    actor: 'alert-config',
    message: 'deliveries',
  },
  {
    method: 'POST',
    path: '/internal/alerts/report',
    role: 'internal',
    summary: 'Alerts reported by the data plane; a fingerprint open or raised within 5 minutes is dropped and counted',
    tags: ['alerts', 'internal'],
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['alerts'],
      properties: { alerts: { type: 'array', minItems: 1, maxItems: 1000, items: alertInput(true) } },
    },
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: { accepted: { type: 'integer' }, deduplicated: { type: 'integer' } },
        required: ['accepted', 'deduplicated'],
      },
    },
    actor: 'alerts',
    message: 'report',
  },
];
