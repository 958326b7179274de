/**
 * The dashboards bench's calls over HTTP, each as a list of distinct requests
 * drawn from a seeded random source (another range of the seeded history, or
 * another master), and each answer's check: the same figures computed from
 * the raw `logs` table for the range the answer reports, exact to the second
 * at both ends (explicit ranges are [since, until); named periods and
 * realtime windows run through their last second). The names match
 * dashboard-reads.ts, which measures the rows the same reads take.
 */
import { moneyNumber } from '../../storage/clickhouse/decimal.js';
import type { ColdRequest } from '../harness/cold-load.js';
import type { Figures, Grouping, RawFigures, RawSource } from './raw-figures.js';

const DAY = 86_400;
const HOUR = 3600;

export interface Master {
  id: number;
  key: string;
}

export interface CallRequest extends ColdRequest {
  call: string;
}

export interface DashboardCall {
  name: string;
  /** The n-th request of this call. */
  request: (rand: () => number) => ColdRequest;
  /**
   * null when the answer equals the raw table's, else what differs. Every raw
   * figure it needs is asked of `raw` before any is used, so that a recording
   * pass learns them all (raw-figures.ts, batchedSource).
   */
  check: (raw: RawSource, json: any, req: ColdRequest) => Promise<string | null>;
}

/** The raw table's figures over [since, until), grouped. */
const rawOf = (src: RawSource, since: number, until: number, group: Grouping, master?: number): Promise<Map<string, RawFigures>> =>
  src.figures({ since, until, group, ...(master === undefined ? {} : { master }) });

const NONE: Figures = { requests: 0, errors: 0, tokens_in: 0, tokens_out: 0, cost: 0 };
const total = async (src: RawSource, since: number, until: number, masterId?: number): Promise<Figures> =>
  (await rawOf(src, since, until, {}, masterId)).get('') ?? NONE;

/** What differs between an answer's figures and the raw ones, or null. */
function differ(label: string, got: Partial<Figures> | undefined, want: Figures): string | null {
  const bad = (Object.keys(NONE) as Array<keyof Figures>).filter((f) => (got?.[f] ?? 0) !== want[f]);
  return bad.length ? `${label}: ${bad.map((f) => `${f} ${got?.[f]} != raw ${want[f]}`).join(', ')}` : null;
}

/** Grouped items (log stats, /v1/stats) against the raw groups: the same keys, the same figures. */
function differItems(label: string, items: Array<Figures & { key: string; start: number | null }>, want: Map<string, Figures>, byStart: boolean): string | null {
  const got = new Map(items.map((i) => [byStart ? String(i.start) : i.key, i]));
  for (const k of new Set([...got.keys(), ...want.keys()])) {
    const d = differ(`${label} ${k}`, got.get(k), want.get(k) ?? NONE);
    if (d) return d;
  }
  return null;
}

const first = (...xs: Array<string | null>): string | null => xs.find((x) => x !== null) ?? null;

/** A range's end inside the seeded history (the last `span` days before `endSec`), off the minute. */
const endIn = (rand: () => number, endSec: number, span: number): number => endSec - Math.floor(rand() * span * DAY);

export function dashboardCalls(endSec: number, masters: Master[], admin: string): DashboardCall[] {
  const pick = (rand: () => number) => masters[Math.floor(rand() * masters.length)]!;
  const summary = (p: 'today' | 'last7d' | 'last30d' | 'all'): DashboardCall => ({
    name: `summary_${p}_trends`,
    // The admin summary has no master: each request's range is the period ending at its own second.
    request: () => ({ path: `/admin/dashboard/summary?period=${p}&include_trends=true`, token: admin }),
    check: async (src, j) => {
      const cur = await total(src, j.since, j.until + 1);
      if (!j.previous) return differ('current', j, cur);
      // Where the two periods share a second it counts for the current one (queryPeriodTotals).
      const prev = await total(src, j.previous.since, Math.min(j.previous.until + 1, j.since));
      const t = j.trends;
      const prevGot = t && { requests: t.requests.previous, errors: t.errors.previous, cost: t.cost.previous, tokens_in: prev.tokens_in, tokens_out: prev.tokens_out };
      const tokens = t && t.tokens.previous !== prev.tokens_in + prev.tokens_out ? `previous tokens ${t.tokens.previous} != raw ${prev.tokens_in + prev.tokens_out}` : null;
      return first(differ('current', j, cur), t ? differ('previous', prevGot, prev) : prev.requests ? 'no trends' : null, tokens);
    },
  });
  const chart = (bucket: 'hour' | 'minute', metric: 'requests' | 'tokens' | 'cost'): DashboardCall => {
    const span = bucket === 'hour' ? 7 * DAY : 6 * HOUR;
    return {
      name: `traffic_${bucket === 'hour' ? 'hour_7d' : 'minute_6h'}_${metric}`,
      request: (rand) => {
        const until = endIn(rand, endSec, bucket === 'hour' ? 20 : 29);
        return { path: `/admin/logs/stats/traffic-chart?granularity=${bucket}&since=${until - span}&until=${until}&top_n=10&metric=${metric}`, token: admin };
      },
      check: async (src, j) => {
        const byModel = await rawOf(src, j.since, j.until, { time: bucket, byModel: true });
        const value = (f: Figures) => (metric === 'requests' ? f.requests : f.tokens_in + f.tokens_out);
        const named = new Set((j.series as Array<{ name: string }>).map((s) => s.name).filter((n) => n !== 'other'));
        // Per bucket and series: a named model's value, or the sum of every other model's (cost summed exactly).
        const want = new Map<string, bigint>();
        for (const [k, f] of byModel) {
          const cut = k.indexOf('|');
          const [t, model] = [k.slice(0, cut), k.slice(cut + 1)];
          const slot = `${named.has(model) ? model : 'other'}|${t}`;
          const v = metric === 'cost' ? f.pico : BigInt(value(f));
          want.set(slot, (want.get(slot) ?? 0n) + v);
        }
        const asAnswer = (v: bigint) => (metric === 'cost' ? moneyNumber(v) : Number(v));
        for (const s of j.series as Array<{ name: string; data: number[] }>) {
          for (const [i, x] of (j.x as number[]).entries()) {
            const w = asAnswer(want.get(`${s.name}|${x}`) ?? 0n);
            if (s.data[i] !== w) return `${s.name} at ${x}: ${s.data[i]} != raw ${w}`;
            want.delete(`${s.name}|${x}`);
          }
        }
        const left = [...want].filter(([, v]) => v !== 0n);
        return left.length ? `raw groups missing from the answer: ${left.map(([k]) => k).join(', ')}` : null;
      },
    };
  };
  const stats = (by: 'day' | 'month', days: number): DashboardCall => ({
    name: by === 'day' ? 'stats_day_30d' : 'stats_month_1y',
    request: (rand) => {
      const until = endIn(rand, endSec, 3);
      return { path: `/admin/logs/stats?group_by=${by}&since=${until - days * DAY}&until=${until}`, token: admin };
    },
    check: async (src, j) => differItems(by, j.items, await rawOf(src, j.since, j.until, { time: by }), true),
  });
  const realtime = (oneMaster: boolean): DashboardCall => ({
    name: oneMaster ? 'realtime_master' : 'realtime',
    request: (rand) => ({ path: oneMaster ? `/admin/masters/${pick(rand).id}/realtime` : '/admin/realtime', token: admin }),
    check: async (src, j, req) => {
      const master = oneMaster ? Number(/masters\/(\d+)/.exec(req.path)![1]) : undefined;
      const window = async (w: { since: number } & Figures) => differ(`since ${w.since}`, w, await total(src, w.since, j.at + 1, master));
      return first(await window(j.last_minute), await window(j.last_5_minutes));
    },
  });
  return [
    ...(['today', 'last7d', 'last30d', 'all'] as const).map(summary),
    ...(['requests', 'tokens', 'cost'] as const).flatMap((m) => [chart('hour', m), chart('minute', m)]),
    stats('day', 30),
    stats('month', 365),
    {
      name: 'v1_stats_last30d',
      request: (rand) => ({ path: '/v1/stats?period=last30d', token: pick(rand).key }),
      check: async (src, j, req) => {
        const master = masters.find((m) => m.key === req.token)!.id;
        const [since, until] = [j.since, j.until + 1];
        return first(
          differ('totals', j.totals, await total(src, since, until, master)),
          differItems('by model', j.by_model, await rawOf(src, since, until, { byModel: true }, master), false),
          differItems('by day', j.by_day, await rawOf(src, since, until, { time: 'day' }, master), true),
        );
      },
    },
    realtime(false),
    realtime(true),
  ];
}
