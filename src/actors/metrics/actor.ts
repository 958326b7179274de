/**
 * Renders /metrics on the main thread, where the state it reads lives: the
 * log writer, the outbox relay, the mailboxes, the stores' health and the
 * identity cache.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import type { Metrics, ScrapeState } from '../../metrics/metrics.js';
import type { ActorSystem } from '../runtime/system.js';
import type { HealthReport } from '../health/actor.js';
import type { IdentityCache } from '../tenancy/identity-cache.js';
import type { OutboxReport } from '../outbox/relay.js';


export function metricsActor(metrics: Metrics, system: ActorSystem, identityCache: IdentityCache): ActorDefinition<MainContext> {
  const scrape = async (ctx: MainContext): Promise<ScrapeState> => {
    const mailboxes = system.depths(); // read before asking, so the scrape's own asks are not counted
    const [logs, outbox, health] = await Promise.all([
      ctx.ask<ScrapeState['logs']>('logs', 'state'),
      ctx.ask<OutboxReport>('outbox', 'state'),
      ctx.ask<HealthReport>('health', 'check'),
    ]);
    return {
      logs,
      outbox: {
        ...outbox,
        oldestPendingAgeSeconds: outbox.oldest_pending_at ? Math.max(0, (ctx.now() - Date.parse(outbox.oldest_pending_at)) / 1000) : 0,
      },
      mailboxes,
      health,
      workerFailures: system.workerFailures,
      identityCache: { ...identityCache.stats, entries: identityCache.size, masterEntries: identityCache.masterSize },
    };
  };
  return {
    name: 'metrics',
    placement: 'main',
    concurrency: 4,
    handlers: {
      render: () => metrics.render(),
    },
    start(ctx) {
      metrics.wire(() => scrape(ctx));
    },
  };
}
