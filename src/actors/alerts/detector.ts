/**
 * The traffic-spike detector, on the main thread beside ClickHouse: every
 * SVC_ALERT_INTERVAL_MS it reads the rollups (logs_minute for the last
 * complete minute, logs_hourly for the 24 hourly buckets up to the current
 * one), applies the thresholds and raises alerts through the `alerts` actor,
 * which deduplicates by fingerprint. It needs no shared store.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { trafficByMaster } from '../../storage/clickhouse/traffic.js';
import type { RaiseResult } from './raise.js';
import { trafficSpikes } from './spikes.js';
import type { Thresholds } from './values.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;

async function run(ctx: MainContext) {
  const now = ctx.now();
  const thresholds = await ctx.ask<Thresholds>('alert-config', 'getThresholds');
  const minuteEnd = Math.floor(now / MINUTE) * MINUTE;
  const hourEnd = Math.floor(now / HOUR) * HOUR + HOUR;
  const minuteWindow = { name: '1m', from: minuteEnd - MINUTE, to: minuteEnd };
  const dayWindow = { name: '24h', from: hourEnd - 24 * HOUR, to: hourEnd };
  const [minuteTraffic, dayTraffic] = await Promise.all([
    trafficByMaster(ctx.clickhouse, 'minute', minuteWindow.from, minuteWindow.to),
    trafficByMaster(ctx.clickhouse, 'hour', dayWindow.from, dayWindow.to),
  ]);
  const candidates = trafficSpikes(thresholds, { window: minuteWindow, traffic: minuteTraffic }, { window: dayWindow, traffic: dayTraffic });
  const raised = candidates.length
    ? await ctx.ask<RaiseResult>('alerts', 'raise', candidates)
    : { accepted: 0, deduplicated: 0, ids: [] };
  return { evaluated_at: new Date(now).toISOString(), candidates: candidates.length, ...raised };
}

export function alertDetector(): ActorDefinition<MainContext> {
  let timer: NodeJS.Timeout | undefined;
  return {
    name: 'alert-detector',
    placement: 'main',
    handlers: {
      /** One evaluation now: how many spikes were found, created and deduplicated. */
      run: (_: unknown, ctx) => run(ctx),
    },
    start(ctx) {
      timer = setInterval(() => {
        ctx.ask('alert-detector', 'run').catch((err: unknown) => ctx.log.error({ err }, 'alert detection failed'));
      }, ctx.config.alertIntervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
