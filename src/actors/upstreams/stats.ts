/** The upstream key statistics summary: counters and rates per key, per group and overall. */
import { implement } from '../runtime/actor.js';
import { upstreamStats } from './handles.js';
import { badRequest } from '../../errors.js';
import { usageByKey, type UsageTotals } from '../../storage/postgres/upstream-usage.js';

/** Rates are fractions of requests (0 when there were none), rounded to 4 decimals. */
export function withRates<T extends UsageTotals>(t: T): T & { success_rate: number; failure_rate: number } {
  const rate = (n: number) => (t.requests > 0 ? Math.round((n / t.requests) * 10_000) / 10_000 : 0);
  return { ...t, success_rate: rate(t.success), failure_rate: rate(t.failure) };
}

const add = (a: UsageTotals, b: UsageTotals): UsageTotals => ({
  requests: a.requests + b.requests,
  success: a.success + b.success,
  failure: a.failure + b.failure,
});

export const statsHandlers = implement(upstreamStats, {
  keyStats: async ({ query }, ctx) => {
    if (query.since !== undefined && query.until !== undefined && query.since > query.until) {
      throw badRequest('since must not be after until', { since: 'is after until' });
    }
    const keys = await usageByKey(ctx.db, { sinceSec: query.since, untilSec: query.until, groupId: query.group_id });
    const groups = new Map<number, UsageTotals & { group_id: number; name: string; keys: number }>();
    let total: UsageTotals = { requests: 0, success: 0, failure: 0 };
    for (const k of keys) {
      const g = groups.get(k.group_id) ?? { group_id: k.group_id, name: k.group_name, keys: 0, requests: 0, success: 0, failure: 0 };
      groups.set(k.group_id, { ...g, ...add(g, k), keys: g.keys + 1 });
      total = add(total, k);
    }
    return {
      since: query.since ?? null,
      until: query.until ?? null,
      total: withRates(total),
      groups: [...groups.values()].map(withRates),
      keys: keys.map(withRates),
    };
  },
});
