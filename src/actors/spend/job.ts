/**
 * The spend job, on the main thread beside ClickHouse: every
 * SVC_SPEND_INTERVAL_MS it sums the cost of the logs of every master and key
 * that has a budget since the start of its budget period (UTC boundaries, as
 * quota periods), and hands the figures to the `budgets` actor, which mirrors
 * them into the shared store and raises budget alerts. A period that ended is
 * caught up by the next pass (its figure starts again from the new boundary).
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import type { BudgetTarget } from '../../storage/postgres/budgets.js';
import { spendSince } from '../../storage/clickhouse/spend.js';
import { periodStart } from '../tenancy/quota.js';
import type { SpendFigure } from './budgets.js';

export interface SpendRun {
  targets: number;
  written: number;
  alerts: number;
  alert_ids: number[];
}

async function run(ctx: MainContext): Promise<SpendRun> {
  const now = ctx.now();
  const targets = await ctx.ask<BudgetTarget[]>('budgets', 'targets');
  if (targets.length === 0) return { targets: 0, written: 0, alerts: 0, alert_ids: [] };
  // Records accepted before this pass count: write what the logs actor still holds.
  await ctx.ask('logs', 'flush');
  // One query per scope and period start (at most 2 x 4).
  const groups = new Map<string, { scope: BudgetTarget['scope']; start: string | null; ids: number[] }>();
  for (const t of targets) {
    const start = periodStart(t.budget_period, now);
    const k = `${t.scope}|${start}`;
    const g = groups.get(k) ?? groups.set(k, { scope: t.scope, start, ids: [] }).get(k)!;
    g.ids.push(t.id);
  }
  // Through the current second, as the statistics' periods run (a record stamped this second counts).
  const through = Math.floor(now / 1000) + 1;
  const figures: SpendFigure[] = [];
  for (const g of groups.values()) {
    const since = g.start ? Date.parse(g.start) / 1000 : null;
    const spent = await spendSince(ctx.clickhouse, g.scope === 'master' ? 'master_id' : 'key_id', g.ids, since, through);
    for (const id of g.ids) figures.push({ scope: g.scope, id, used: spent.get(id) ?? '0', periodStart: g.start });
  }
  const applied = await ctx.ask<Omit<SpendRun, 'targets'>>('budgets', 'apply', { figures });
  return { targets: targets.length, ...applied };
}

export function spendJob(): ActorDefinition<MainContext> {
  let timer: NodeJS.Timeout | undefined;
  return {
    name: 'spend',
    placement: 'main',
    handlers: {
      /** One pass now: how many budgets were computed, written and alerted. */
      run: (_: unknown, ctx) => run(ctx),
    },
    start(ctx) {
      timer = setInterval(() => {
        ctx.ask('spend', 'run').catch((err: unknown) => ctx.log.error({ err }, 'spend computation failed'));
      }, ctx.config.spendIntervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
