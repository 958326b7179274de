/**
 * The analytics actor, on the main thread beside ClickHouse: grouped log
 * statistics, traffic charts, the dashboard summary with trends, realtime
 * figures and the tenant's own statistics, exact to the second: rollups for
 * the whole minutes, raw logs for the partial ones at the ends
 * (src/storage/clickhouse/stats.ts). "Now" is the service clock; a named
 * period runs through the current second.
 */
import { implement, type ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { analytics } from './handles.js';
import { badRequest } from '../../errors.js';
import {
  emptyRow, queryGroupings, queryPeriodTotals, querySeries, queryStats, type Bucket, type SeriesMetric, type StatsFilter, type StatsRow, type TimeRange,
} from '../../storage/clickhouse/stats.js';
import { moneyNumber } from '../../storage/clickhouse/decimal.js';
import { derived } from '../../storage/clickhouse/derived.js';
import type { EntityCounts } from '../../storage/postgres/analytics.js';
import { periodRange, previousRange, readRange, type Period } from './periods.js';
import { realtimeOf, type RealtimeView } from './realtime.js';
import { trend } from './trends.js';
import type { StatsReadCache } from './read-cache.js';
import { filterChoices } from './filter-choices.js';
import { chartSeries } from './chart.js';
import { freshness } from './freshness.js';
import type { ClickHouseReader } from '../../storage/clickhouse/client.js';

const HOUR = 3600;
const MAX_MINUTE_RANGE = 6 * HOUR;
const MAX_HOUR_RANGE = 31 * 24 * HOUR;
const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

type RangeQuery = { since?: number; until?: number; master_id?: number; key_id?: number; model?: string };

/** The window read when since or until is absent: the last 24 hours (6 hours, the most allowed, for minute buckets). */
export const DEFAULT_WINDOW = 24 * HOUR;

/**
 * Absent bounds default to a window ending now: until = now, since = until - DEFAULT_WINDOW (or 6 hours for
 * minute buckets). The order and the span of minute and hour buckets are checked here.
 */
function checkRange(query: { since?: number; until?: number }, nowMs: number, granularity?: Bucket): TimeRange {
  const window = granularity === 'minute' ? MAX_MINUTE_RANGE : DEFAULT_WINDOW;
  const until = query.until ?? Math.ceil(nowMs / 1000);
  const q = { since: query.since ?? Math.max(0, until - window), until };
  if (q.until <= q.since) throw badRequest('until must be after since', { until: 'must be greater than since' });
  if (granularity === 'minute' && q.until - q.since > MAX_MINUTE_RANGE) {
    throw badRequest('a minute range may span at most 6 hours', { until: 'at most 21600 seconds after since for minute buckets' });
  }
  if (granularity === 'hour' && q.until - q.since > MAX_HOUR_RANGE) {
    throw badRequest('an hour range may span at most 31 days', { until: 'at most 2678400 seconds after since for hour buckets' });
  }
  return { since: q.since, until: q.until };
}

const filterOf = (q: RangeQuery): StatsFilter => ({ master_id: q.master_id, key_id: q.key_id, model: q.model });

/** The label of a bucket: its UTC date, month, or RFC 3339 start. */
function bucketKey(start: number, bucket: Bucket): string {
  const iso = new Date(start * 1000).toISOString();
  if (bucket === 'day') return iso.slice(0, 10);
  if (bucket === 'month') return iso.slice(0, 7);
  return `${iso.slice(0, 19)}Z`;
}

/** Request, error, token, cost and latency figures of one group (shared by every statistics answer). */
export function figures(r: StatsRow) {
  const q = r.quantiles;
  return {
    requests: r.requests,
    errors: r.errors,
    error_rate: r.requests ? round(r.errors / r.requests, 4) : 0,
    tokens_in: r.tokens_in,
    tokens_out: r.tokens_out,
    tokens: r.tokens_in + r.tokens_out,
    cost: moneyNumber(r.cost),
    unpriced: r.unpriced,
    avg_latency_ms: r.requests ? round(r.latency_sum / r.requests, 2) : 0,
    p50_latency_ms: q ? round(q[0], 2) : 0,
    p95_latency_ms: q ? round(q[1], 2) : 0,
    p99_latency_ms: q ? round(q[2], 2) : 0,
  };
}

/** Figures without the latency percentiles (not read). */
function withoutPercentiles(r: StatsRow) {
  const { p50_latency_ms: _a, p95_latency_ms: _b, p99_latency_ms: _c, ...rest } = figures(r);
  return rest;
}

/** GroupedStatsItem: groups by model busiest first, time buckets in order; without percentiles when they were not read. */
function groupedItems(rows: StatsRow[], groupBy: Bucket | 'model', percentiles = true) {
  // Once per cached read (derived.ts): labels, decimals and the sort are the same for every request it serves.
  return derived(rows, `items/${groupBy}/${percentiles}`, () => {
    const figuresOf = percentiles ? figures : withoutPercentiles;
    const items = rows.map((r) =>
      groupBy === 'model'
        ? { key: r.model!, start: null, ...figuresOf(r) }
        : { key: bucketKey(r.start!, groupBy), start: r.start, ...figuresOf(r) },
    );
    if (groupBy === 'model') items.sort((a, b) => b.requests - a.requests || (a.key < b.key ? -1 : 1));
    return items;
  });
}

async function grouped(ch: ClickHouseReader, range: TimeRange, filter: StatsFilter, groupBy: Bucket | 'model', percentiles: boolean) {
  const rows = await queryStats(ch, {
    range,
    filter,
    bucket: groupBy === 'model' ? undefined : groupBy,
    byModel: groupBy === 'model',
    quantiles: percentiles,
  });
  return groupedItems(rows, groupBy, percentiles);
}

/** Sums rows into one (latency quantiles cannot be summed and are dropped; cost sums exactly). */
function total(rows: StatsRow[]): StatsRow {
  const t = emptyRow();
  for (const r of rows) {
    t.requests += r.requests;
    t.errors += r.errors;
    t.tokens_in += r.tokens_in;
    t.tokens_out += r.tokens_out;
    t.cost += r.cost;
    t.unpriced += r.unpriced;
    t.latency_sum += r.latency_sum;
  }
  return t;
}

/** Dashboard totals of a period (no quantiles). */
function summaryOf(row: StatsRow) {
  const f = figures(row);
  return {
    requests: f.requests, errors: f.errors, error_rate: f.error_rate, tokens_in: f.tokens_in, tokens_out: f.tokens_out, tokens: f.tokens,
    cost: f.cost, unpriced: f.unpriced, avg_latency_ms: f.avg_latency_ms,
  };
}
type Summary = ReturnType<typeof summaryOf>;

function trendsOf(cur: Summary, prev: Summary) {
  // With no requests in the previous period its latency and error rate are missing, not zero.
  const hadRequests = prev.requests > 0;
  return {
    requests: trend(cur.requests, prev.requests, false),
    errors: trend(cur.errors, prev.errors, false),
    tokens: trend(cur.tokens, prev.tokens, false),
    cost: trend(cur.cost, prev.cost, false),
    error_rate: trend(cur.error_rate, hadRequests ? prev.error_rate : null, true),
    avg_latency_ms: trend(cur.avg_latency_ms, hadRequests ? prev.avg_latency_ms : null, true),
  };
}

/** The master's view and global_qps through the tenancy actor (404 for an unknown or deleted master). */
const masterOf = (ctx: MainContext, id: number) =>
  ctx.ask<Record<string, unknown> & { id: number; global_qps: number }>('masters', 'get', { params: { id } });

/**
 * `cache` keeps answers until the logs of their scope change
 * (docs/analytics.md, "The statistics cache"); without it every read goes to
 * ClickHouse.
 */
export function analyticsActor(cache?: StatsReadCache): ActorDefinition<MainContext> {
  /** What reads statistics of one master, or of everything. */
  const reader = (ctx: MainContext, masterId?: number): Promise<ClickHouseReader> =>
    cache ? cache.reader(masterId) : Promise.resolve(ctx.clickhouse);
  return {
    name: 'analytics',
    placement: 'main',
    concurrency: 64,
    handlers: implement<typeof analytics, MainContext>(analytics, {
      stats: async ({ query }, ctx) => {
        const groupBy = query.group_by;
        const range = checkRange(query, ctx.now(), groupBy === 'minute' ? 'minute' : undefined);
        const items = await grouped(await reader(ctx, query.master_id), range, filterOf(query), groupBy, query.percentiles !== false);
        return { group_by: groupBy, since: range.since, until: range.until, items };
      },

      trafficChart: async (
        { query },
        ctx,
      ) => {
        const step = query.granularity === 'minute' ? 60 : HOUR;
        const range = checkRange(query, ctx.now(), query.granularity);
        const models = await querySeries(await reader(ctx, query.master_id), { range, filter: filterOf(query), bucket: query.granularity, metric: query.metric });
        const x: number[] = [];
        for (let t = Math.floor(range.since / step) * step; t < range.until; t += step) x.push(t);
        // Once per cached read (derived.ts): the same rows and axis give the same series.
        const series = derived(models, `chart/${x[0]}/${x.length}/${step}/${query.top_n}/${query.metric}`, () => chartSeries(models, x, query.top_n, query.metric));
        return { granularity: query.granularity, metric: query.metric, since: range.since, until: range.until, top_n: query.top_n, x, series };
      },

      summary: async ({ query }, ctx) => {
        const now = ctx.now();
        const range = periodRange(query.period, now);
        const prevRange = query.include_trends ? previousRange(query.period, now) : null;
        // Both periods in one read of the rollups.
        const [totals, counts] = await Promise.all([
          reader(ctx).then((ch) => queryPeriodTotals(ch, prevRange ? [readRange(range), readRange(prevRange)] : [readRange(range)])),
          ctx.ask<EntityCounts>('analytics-counts', 'counts'),
        ]);
        const cur = summaryOf(totals[0]!);
        const prev = prevRange ? summaryOf(totals[1]!) : null;
        return {
          period: query.period,
          since: range.since,
          until: range.until,
          ...cur,
          ...counts,
          ...(query.include_trends ? { previous: prevRange, trends: prev ? trendsOf(cur, prev) : null } : {}),
        };
      },

      realtime: (_, ctx): Promise<RealtimeView> => realtimeOf(ctx),

      freshness: ({ principal }, ctx) => freshness(ctx.clickhouse, principal, ctx.now()),

      filterChoices: async ({ query, principal }, ctx) =>
        filterChoices(await reader(ctx, principal.type === 'master' ? principal.id : query.master_id), query, principal),

      tenantFilterChoices: async ({ query, principal }, ctx) =>
        filterChoices(await reader(ctx, principal.type === 'master' ? principal.id : undefined), query, principal),

      masterRealtime: async ({ params }, ctx) => {
        const m = await masterOf(ctx, params.id);
        return realtimeOf(ctx, m.id, m.global_qps);
      },

      /** GET /admin/masters/{id}: the tenancy view with the realtime figures embedded. */
      masterDetail: async (input, ctx) => {
        const m = await masterOf(ctx, input.params.id);
        return { ...m, realtime: await realtimeOf(ctx, m.id, m.global_qps) };
      },

      tenantRealtime: async ({ principal }, ctx) => {
        const m = await masterOf(ctx, (principal as { id: number }).id);
        return realtimeOf(ctx, m.id, m.global_qps);
      },

      tenantStats: async ({ query, principal }, ctx) => {
        const range = periodRange(query.period, ctx.now());
        const filter = { master_id: (principal as { id: number }).id };
        const [byModel, byDay] = (await queryGroupings(await reader(ctx, filter.master_id), {
          range: readRange(range),
          filter,
          sets: [{ byModel: true }, { bucket: 'day' }],
          quantiles: true,
        })) as [StatsRow[], StatsRow[]];
        const totals = withoutPercentiles(total(byModel));
        return {
          period: query.period,
          since: range.since,
          until: range.until,
          totals,
          by_model: groupedItems(byModel, 'model'),
          by_day: groupedItems(byDay, 'day'),
        };
      },
    }),
  };
}
