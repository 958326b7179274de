/**
 * Queries of budgets (sql/postgres/007_spend.sql): the masters and keys that
 * have one, their spend as the spend job computed it, and the budget alerts
 * already raised per period.
 */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { decimal, idRow, int, text, time } from './row-types.js';

const scopes = z.enum(['master', 'key']);
export type BudgetScope = z.infer<typeof scopes>;

const budgetTarget = z.object({
  scope: scopes,
  id: int,
  master_id: int,
  /** Keys only: the store hash the spend is mirrored into. */
  token_hash: text.nullable(),
  budget: decimal,
  budget_period: text,
  budget_period_start: time.nullable(),
  budget_used: decimal,
});
export type BudgetTarget = z.infer<typeof budgetTarget>;

/** Every live master and unrevoked key with a budget. */
export async function budgetTargets(db: CommonQueryMethods): Promise<BudgetTarget[]> {
  return [...(await db.any(sql.type(budgetTarget)`
    SELECT 'master' AS scope, id, id AS master_id, NULL::text AS token_hash, budget::text AS budget, budget_period,
      budget_period_start, budget_used::text AS budget_used
    FROM masters WHERE budget IS NOT NULL AND deleted_at IS NULL
    UNION ALL
    SELECT 'key', id, master_id, token_hash, budget::text, budget_period, budget_period_start, budget_used::text
    FROM child_keys WHERE budget IS NOT NULL AND NOT revoked
    ORDER BY scope, id`))];
}

/** Writes one target's spend and period start when either changed; true when it did. */
export async function setBudgetUsed(
  db: CommonQueryMethods,
  scope: BudgetScope,
  id: number,
  used: string,
  periodStart: string | null,
): Promise<boolean> {
  const table = sql.identifier([scope === 'master' ? 'masters' : 'child_keys']);
  const start = periodStart === null ? sql.fragment`NULL::timestamptz` : sql.fragment`${periodStart}::timestamptz`;
  const row = await db.maybeOne(sql.type(idRow)`
    UPDATE ${table} SET budget_used = ${used}::numeric, budget_period_start = ${start}
    WHERE id = ${id} AND (budget_used <> ${used}::numeric OR budget_period_start IS DISTINCT FROM ${start})
    RETURNING id`);
  return row !== null;
}

/** Records that a threshold of a period was reached; false when it already was (raised before). */
export async function claimBudgetAlert(
  db: CommonQueryMethods,
  scope: BudgetScope,
  id: number,
  periodStart: string | null,
  threshold: 80 | 100,
  at: string,
): Promise<boolean> {
  const start = periodStart === null ? sql.fragment`'-infinity'::timestamptz` : sql.fragment`${periodStart}::timestamptz`;
  const row = await db.maybeOne(sql.type(z.object({ target_id: int }))`
    INSERT INTO budget_alerts_raised (scope, target_id, period_start, threshold, raised_at)
    VALUES (${scope}, ${id}, ${start}, ${threshold}, ${at}::timestamptz)
    ON CONFLICT DO NOTHING RETURNING target_id`);
  return row !== null;
}
