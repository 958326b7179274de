/**
 * The alert messages that routes reach (alerts, thresholds, the log-error
 * webhook, the data plane's reports), with the schemas of what each receives.
 * Plain data: the HTTP layer imports this module without the actors' code or
 * their stores.
 */
import { handles, type Validated } from '../../contract/handle.js';
import { idParam } from '../../contract/params.js';
import { pageQuery } from '../../contract/page.js';
import { alertTypes, severities, statuses } from '../../contract/alert-values.js';

export const metadata = { type: 'object', additionalProperties: true, maxProperties: 100 } as const;

const alertFields = {
  type: { type: 'string', enum: [...alertTypes] },
  severity: { type: 'string', enum: [...severities] },
  fingerprint: { type: 'string', minLength: 1, maxLength: 200 },
  message: { type: 'string', minLength: 1, maxLength: 2000 },
  metadata,
  master_id: { type: 'integer', minimum: 1 },
} as const;

/** One alert as the admin sends it: a fingerprint is generated when omitted. */
const adminAlert = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'severity', 'message'],
  properties: alertFields,
} as const;

/** One alert as the data plane reports it, with its fingerprint. */
const reportedAlert = { ...adminAlert, required: ['type', 'severity', 'message', 'fingerprint'] } as const;

/** One alert as a route receives it (the admin's or the data plane's). */
export type AlertBody = Validated<typeof adminAlert>;

const limit = <const M extends number>(max: M) => ({ type: 'integer', minimum: 0, maximum: max }) as const;
export const thresholdFields = {
  global_qps: limit(2_147_483_647),
  master_rpm: limit(2_147_483_647),
  master_tpm: limit(Number.MAX_SAFE_INTEGER),
  master_rpd: limit(Number.MAX_SAFE_INTEGER),
  master_tpd: limit(Number.MAX_SAFE_INTEGER),
  min_samples: limit(2_147_483_647),
} as const;

export const webhookFields = {
  enabled: { type: 'boolean' },
  url: { type: 'string', maxLength: 2000 },
  threshold: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
  window_seconds: { type: 'integer', minimum: 1, maximum: 86_400 },
  cooldown_seconds: { type: 'integer', minimum: 0, maximum: 604_800 },
  // 0 turns the status-code criterion off; below 400 a record is no error-looking record at all.
  status_code_threshold: { anyOf: [{ const: 0 }, { type: 'integer', minimum: 400, maximum: 999 }] },
  detect_error_message: { type: 'boolean' },
} as const;

export const alerts = handles('alerts', {
  create: { body: adminAlert },
  list: {
    query: pageQuery({
      status: { type: 'string', enum: [...statuses] },
      severity: { type: 'string', enum: [...severities] },
      type: { type: 'string', enum: [...alertTypes] },
      master_id: { type: 'integer', minimum: 1 },
    }),
  },
  stats: {},
  get: { params: idParam },
  acknowledge: { params: idParam },
  resolve: { params: idParam },
  dismiss: { params: idParam },
  report: {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['alerts'],
      properties: { alerts: { type: 'array', minItems: 1, maxItems: 1000, items: reportedAlert } },
    },
  },
});

export const alertConfig = handles('alert-config', {
  getThresholds: {},
  updateThresholds: { body: { type: 'object', additionalProperties: false, minProperties: 1, properties: thresholdFields } },
  getWebhook: {},
  updateWebhook: {
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { ...webhookFields, secret: { type: ['string', 'null'], maxLength: 256 } },
    },
  },
  deliveries: {
    query: {
      type: 'object',
      properties: { page: { type: 'integer', minimum: 1, default: 1 }, limit: { type: 'integer', minimum: 1, default: 50 } },
    },
  },
});
