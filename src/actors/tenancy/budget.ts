/**
 * Budgets of masters and keys (docs/spend.md): one rule for create and update,
 * admin and tenant paths. A new period (or a period set for the first time)
 * starts at its current UTC boundary, as quota periods do; the spend itself is
 * computed from the logs by the spend job.
 */
import type { Budget } from '../../storage/postgres/tenancy.js';
import { periodStart } from './quota.js';
import type { BudgetInput } from './handles.js';

export function newBudget(body: BudgetInput, nowMs: number): Budget {
  const period = body.budget_period ?? 'never';
  return { budget: body.budget ?? null, period, periodStart: periodStart(period, nowMs) };
}

/** The columns an update sets (none when it names no budget field). */
export function budgetUpdate(body: BudgetInput, cur: { budget_period: string }, nowMs: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (body.budget !== undefined) fields.budget = body.budget;
  if (body.budget_period !== undefined && body.budget_period !== cur.budget_period) {
    fields.budget_period = body.budget_period;
    fields.budget_period_start = { ts: periodStart(body.budget_period, nowMs) };
    fields.budget_used = 0; // the spend job computes the new period's figure on its next pass
  }
  return fields;
}
