/**
 * The two single records of the domain: the traffic-spike thresholds and the
 * log-error webhook configuration (whose secret is write-only), and the
 * webhook's delivery log. A webhook change reaches the observer on the main
 * thread at once through `log-webhook refresh`.
 */
import { defineActor, implement } from '../runtime/actor.js';
import { alertConfig } from './handles.js';
import { badRequest } from '../../errors.js';
import { clampLimit } from '../../contract/page.js';
import { listDeliveries, readThresholds, readWebhookConfig, updateSingle } from '../../storage/postgres/alerts.js';
import { thresholdDefaults, webhookDefaults, type WebhookConfig } from './values.js';

/** What the admin sees: everything but the secret, which only shows as set or not. */
export function webhookView(c: WebhookConfig & { updatedAt: string }) {
  const { secret, ...rest } = c;
  return { ...rest, secret_set: secret !== '' };
}

/** Rules across fields, checked on the configuration as it would be after the change. */
function checkWebhook(c: WebhookConfig): void {
  const errors: Record<string, string> = {};
  if (c.url !== '') {
    let scheme = '';
    try {
      scheme = new URL(c.url).protocol;
    } catch {
      /* reported below */
    }
    if (scheme !== 'http:' && scheme !== 'https:') errors.url = 'must be an http or https URL';
  }
  if (c.enabled && c.url === '') errors.url = 'is required when enabled';
  if (c.enabled && c.status_code_threshold === 0 && !c.detect_error_message) {
    errors.status_code_threshold = 'cannot be 0 while detect_error_message is false: nothing would count as an error';
  }
  if (Object.keys(errors).length) throw badRequest('invalid webhook configuration', errors);
}

export default defineActor({
  name: 'alert-config',
  placement: 'worker',
  handlers: implement(alertConfig, {
    getThresholds: (_, ctx) => readThresholds(ctx.db, thresholdDefaults),

    updateThresholds: async ({ body }, ctx) =>
      ctx.db.transaction(async (tx) => {
        await readThresholds(tx, thresholdDefaults);
        await updateSingle(tx, 'alert_thresholds', body, new Date(ctx.now()).toISOString());
        return readThresholds(tx, thresholdDefaults);
      }),

    getWebhook: async (_, ctx) => webhookView(await readWebhookConfig(ctx.db, webhookDefaults)),

    updateWebhook: async ({ body }, ctx) => {
      const { secret, ...rest } = body;
      const fields: Record<string, string | number | boolean> = { ...rest };
      if (secret !== undefined) fields.secret = secret ?? '';
      const next = await ctx.db.transaction(async (tx) => {
        const current = await readWebhookConfig(tx, webhookDefaults);
        checkWebhook({ ...current, ...(fields as Partial<WebhookConfig>) });
        await updateSingle(tx, 'log_webhook_config', fields, new Date(ctx.now()).toISOString());
        return readWebhookConfig(tx, webhookDefaults);
      });
      await ctx.ask('log-webhook', 'refresh'); // in force on this node before the answer
      return webhookView(next);
    },

    deliveries: async ({ query }, ctx) => {
      const limit = clampLimit(query.limit);
      const { items, total } = await listDeliveries(ctx.db, limit, (query.page - 1) * limit);
      return { items, total, page: query.page, limit };
    },
  }),
});
