/**
 * The log-error webhook, on the main thread beside the logs actor. Its
 * observer runs inside POST /logs, so it only counts: matching records go into
 * a sliding window, and when the count over `window_seconds` exceeds
 * `threshold` and the cooldown has passed, a delivery starts in the background
 * (one at a time). The configuration is cached here: reloaded on every PUT
 * (`refresh`) and every 10 s, so another node's change arrives too.
 */
import { randomUUID } from 'node:crypto';
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import type { IngestObserver } from '../logs/actor.js';
import type { LogRecord } from '../logs/record.js';
import { LOG_COLUMNS } from '../../storage/clickhouse/logs-table.js';
import { readWebhookConfig, recordDelivery } from '../../storage/postgres/alerts.js';
import { defaultDelivery, postWithRetries, type DeliveryOptions } from './deliver.js';
import { SlidingCount } from './sliding-count.js';
import { webhookDefaults, type WebhookConfig } from './values.js';

const REFRESH_MS = 10_000;
/** Delivery attempts kept for the admin. */
export const DELIVERIES_KEPT = 100;

export interface LogWebhook extends ActorDefinition<MainContext> {
  observer: IngestObserver;
}

export function isLogError(c: WebhookConfig, r: LogRecord): boolean {
  return (c.status_code_threshold > 0 && r.status_code >= c.status_code_threshold) ||
    (c.detect_error_message && typeof r.error_message === 'string' && r.error_message !== '');
}

/** The stored fields of a record as a LogRecord again (createdAt in RFC 3339); bodies are left out of notifications. */
function sampleOf(r: LogRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of LOG_COLUMNS) {
    if (c === 'request_body' || c === 'response_body' || r[c] === undefined) continue;
    if (c === 'created_at') out.createdAt = `${String(r[c]).replace(' ', 'T')}Z`;
    else out[c] = r[c];
  }
  return out;
}

export function logWebhook(delivery: DeliveryOptions = defaultDelivery): LogWebhook {
  let config: (WebhookConfig & { updatedAt: string }) | null = null;
  let ctx: MainContext | undefined;
  let timer: NodeJS.Timeout | undefined;
  const errors = new SlidingCount();
  let lastTriggered = -Infinity;
  let inFlight: Promise<void> | null = null;
  const stats = { triggered: 0, skippedInFlight: 0 };

  const refresh = async (c: MainContext): Promise<void> => {
    const next = await readWebhookConfig(c.db, webhookDefaults);
    // A changed configuration starts afresh: new window, no cooldown pending.
    if (config?.updatedAt !== next.updatedAt) {
      errors.clear();
      lastTriggered = -Infinity;
    }
    config = next;
  };

  const deliver = async (c: MainContext, cfg: WebhookConfig, count: number, now: number, sample: LogRecord): Promise<void> => {
    const body = JSON.stringify({
      event: 'log_errors',
      count,
      threshold: cfg.threshold,
      window_seconds: cfg.window_seconds,
      triggered_at: new Date(now).toISOString(),
      sample: sampleOf(sample),
    });
    const trigger_id = randomUUID();
    await postWithRetries(cfg.url, body, cfg.secret, delivery, async (r) => {
      try {
        await recordDelivery(c.db, { ...r, trigger_id, url: cfg.url, count }, new Date(c.now()).toISOString(), DELIVERIES_KEPT);
      } catch (err) {
        c.log.warn({ err }, 'could not record a webhook delivery attempt');
      }
      if (!r.ok) c.log.warn({ attempt: r.attempt, status: r.status_code, error: r.error }, 'log-error webhook attempt failed');
    });
  };

  const observer: IngestObserver = (records) => {
    const cfg = config;
    if (!cfg?.enabled || !ctx) return;
    let n = 0;
    let sample: LogRecord | undefined;
    for (const r of records) {
      if (isLogError(cfg, r)) {
        n++;
        sample = r;
      }
    }
    if (n === 0) return;
    const now = ctx.now();
    errors.add(now, n);
    const count = errors.count(now, cfg.window_seconds);
    if (count <= cfg.threshold || now - lastTriggered < cfg.cooldown_seconds * 1000) return;
    if (inFlight) {
      stats.skippedInFlight++;
      return;
    }
    lastTriggered = now;
    stats.triggered++;
    const c = ctx;
    inFlight = deliver(c, cfg, count, now, { ...sample! })
      .catch((err: unknown) => c.log.error({ err }, 'log-error webhook delivery failed'))
      .finally(() => {
        inFlight = null;
      });
  };

  return {
    name: 'log-webhook',
    placement: 'main',
    observer,
    handlers: {
      refresh: (_: unknown, c) => refresh(c),
      /** Waits for the delivery in progress, if any. */
      settle: () => inFlight ?? undefined,
      state: (_: unknown, c) => ({
        enabled: config?.enabled ?? false,
        count: config ? errors.count(c.now(), config.window_seconds) : 0,
        last_triggered_at: Number.isFinite(lastTriggered) ? new Date(lastTriggered).toISOString() : null,
        delivering: inFlight !== null,
        ...stats,
      }),
    },
    async start(c) {
      ctx = c;
      await refresh(c).catch((err: unknown) => c.log.warn({ err }, 'could not load the log webhook configuration'));
      timer = setInterval(() => {
        refresh(c).catch((err: unknown) => c.log.warn({ err }, 'could not refresh the log webhook configuration'));
      }, REFRESH_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await inFlight;
    },
  };
}
