/**
 * Realtime figures. A window of N minutes is the N whole minutes before the
 * current one plus the current minute so far, so fresh records count at once
 * and QPS never divides by a sliver of a minute: `seconds` (whole seconds,
 * between 60·N and 60·(N+1)) is the window's length up to `at` and QPS is
 * requests / seconds. A window holds the records created from `since` through
 * the second `at` (exact to the second: whole minutes from `logs_minute`, the
 * current minute so far from raw `logs`). Rate-limit status compares the last-minute QPS with the
 * master's global_qps (0 = unlimited).
 */
import type { MainContext } from '../main-context.js';
import { queryPeriodTotals, type StatsRow } from '../../storage/clickhouse/stats.js';
import { moneyNumber } from '../../storage/clickhouse/decimal.js';

type WindowTotals = Pick<StatsRow, 'requests' | 'errors' | 'tokens_in' | 'tokens_out' | 'cost' | 'unpriced'>;

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

export interface RateLimitStatus {
  limit: number;
  current_qps: number;
  /** current_qps / limit (0 when unlimited). */
  utilization: number;
  limited: boolean;
}

export interface RealtimeView {
  at: number;
  last_minute: ReturnType<typeof windowView>;
  last_5_minutes: ReturnType<typeof windowView>;
  rate_limit?: RateLimitStatus;
}

/** Whole seconds: the window ends at the current second (`at`). */
function windowView(t: WindowTotals, since: number, at: number) {
  const seconds = at - since;
  return {
    since,
    seconds,
    requests: t.requests,
    errors: t.errors,
    tokens_in: t.tokens_in,
    tokens_out: t.tokens_out,
    tokens: t.tokens_in + t.tokens_out,
    cost: moneyNumber(t.cost),
    unpriced: t.unpriced,
    qps: round(t.requests / seconds, 3),
  };
}

export function rateLimit(limit: number, currentQps: number): RateLimitStatus {
  return {
    limit,
    current_qps: currentQps,
    utilization: limit > 0 ? round(currentQps / limit, 4) : 0,
    limited: limit > 0 && currentQps >= limit,
  };
}

/** System-wide without a master; one master's figures and rate-limit status with one. */
export async function realtimeOf(ctx: MainContext, masterId?: number, globalQps = 0): Promise<RealtimeView> {
  const at = Math.floor(ctx.now() / 1000);
  const minute = Math.floor(at / 60) * 60;
  // Two disjoint pieces in one read: the last minute (through the second `at`) and the four minutes before it.
  const [one, before] = await queryPeriodTotals(
    ctx.clickhouse,
    [{ since: minute - 60, until: at + 1 }, { since: minute - 300, until: minute - 60 }],
    masterId === undefined ? undefined : { master_id: masterId },
  );
  const five: WindowTotals = {
    requests: one!.requests + before!.requests,
    errors: one!.errors + before!.errors,
    tokens_in: one!.tokens_in + before!.tokens_in,
    tokens_out: one!.tokens_out + before!.tokens_out,
    cost: one!.cost + before!.cost,
    unpriced: one!.unpriced + before!.unpriced,
  };
  const last_minute = windowView(one!, minute - 60, at);
  const view: RealtimeView = { at, last_minute, last_5_minutes: windowView(five, minute - 300, at) };
  if (masterId !== undefined) view.rate_limit = rateLimit(globalQps, last_minute.qps);
  return view;
}
