/**
 * Budget bookkeeping (worker): the masters and keys that have a budget, and
 * applying the spend job's figures. Each pass writes the changed spends to
 * Postgres and, in the same transaction, to the shared store through the
 * outbox (beside quota_used, docs/store-layout.md), and raises the budget
 * alerts of thresholds newly reached: `warning` at 80 %, `critical` at 100 %,
 * once per master or key and period (only the highest when both are reached at once).
 */
import { defineActor } from '../runtime/actor.js';
import type { NewAlert } from '../../storage/postgres/alerts.js';
import { budgetTargets, claimBudgetAlert, setBudgetUsed, type BudgetScope, type BudgetTarget } from '../../storage/postgres/budgets.js';
import type { StoreOp } from '../../storage/redis/store.js';
import { budgetUsedOp } from '../../storage/redis/writers/tenancy.js';
import { raiseAlerts } from '../alerts/raise.js';
import { commitChange } from '../outbox/change.js';
import { toPico } from '../../contract/money.js';

/** One target's spend in its current period, as the spend job computed it. */
export interface SpendFigure {
  scope: BudgetScope;
  id: number;
  used: string;
  /** ISO start of the current period; null for `never`. */
  periodStart: string | null;
}

const big = (text: string): bigint => BigInt(toPico(text));

/** The thresholds (percent) `used` has reached of `budget`; nothing while nothing was spent. */
export function reached(used: string, budget: string): Array<80 | 100> {
  const u = big(used);
  const b = big(budget);
  if (u <= 0n) return [];
  const out: Array<80 | 100> = [];
  if (u * 100n >= b * 80n) out.push(80);
  if (u >= b) out.push(100);
  return out;
}

function alertOf(t: BudgetTarget, f: SpendFigure, threshold: 80 | 100): NewAlert {
  const who = t.scope === 'master' ? `master ${t.id}` : `key ${t.id} of master ${t.master_id}`;
  return {
    type: 'budget',
    severity: threshold === 100 ? 'critical' : 'warning',
    fingerprint: `budget:${t.scope}:${t.id}:${f.periodStart ?? 'never'}:${threshold}`,
    message: `${who} spent ${f.used} of its ${t.budget_period} budget ${t.budget} (${threshold}% reached)`,
    metadata: {
      scope: t.scope,
      ...(t.scope === 'key' ? { key_id: t.id } : {}),
      master_id: t.master_id,
      spend: Number(f.used),
      budget: Number(t.budget),
      period: t.budget_period,
      period_start: f.periodStart,
      threshold,
    },
    master_id: t.master_id,
    source: 'detector',
  };
}

export default defineActor({
  name: 'budgets',
  placement: 'worker',
  handlers: {
    targets: (_: unknown, ctx) => budgetTargets(ctx.db),

    apply: async ({ figures }: { figures: SpendFigure[] }, ctx) => {
      const now = ctx.now();
      const at = new Date(now).toISOString();
      return commitChange(ctx, async (tx, out) => {
        const targets = new Map((await budgetTargets(tx)).map((t) => [`${t.scope}:${t.id}`, t]));
        const ops: StoreOp[] = [];
        const ids: string[] = [];
        const alerts: NewAlert[] = [];
        for (const f of figures) {
          const t = targets.get(`${f.scope}:${f.id}`);
          if (!t) continue; // the budget was removed meanwhile
          if (await setBudgetUsed(tx, f.scope, f.id, f.used, f.periodStart)) {
            ops.push(budgetUsedOp(f.scope === 'master' ? { master: f.id } : { token: t.token_hash! }, f.used, f.periodStart));
            ids.push(`${f.scope}:${f.id}`);
          }
          let highest: 80 | 100 | undefined;
          for (const threshold of reached(f.used, t.budget)) {
            if (await claimBudgetAlert(tx, f.scope, f.id, f.periodStart, threshold, at)) highest = threshold;
          }
          if (highest) alerts.push(alertOf(t, f, highest));
        }
        out.change('budget', ops, ids, { idsPerOp: true });
        const raised = alerts.length ? await raiseAlerts(tx, alerts, now) : { accepted: 0, deduplicated: 0, ids: [] };
        return { written: ops.length, alerts: raised.accepted, alert_ids: raised.ids };
      });
    },
  },
});
