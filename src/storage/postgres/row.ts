/**
 * Column lists and SET clauses built from a plain object, for the upstream
 * domain's inserts and partial updates: arrays bind as text[], objects as
 * jsonb, everything else as a plain parameter.
 */
import { sql, type ValueExpression } from 'slonik';

export function bindValue(v: unknown): ValueExpression {
  if (Array.isArray(v)) return sql.array(v as string[], 'text');
  if (v !== null && typeof v === 'object') return sql.jsonb(v as never);
  return v as ValueExpression;
}

const defined = (values: Record<string, unknown>) => Object.entries(values).filter(([, v]) => v !== undefined);

/** `(a, b) VALUES ($1, $2)` */
export function insertColumns(values: Record<string, unknown>) {
  const entries = defined(values);
  return sql.fragment`(${sql.join(entries.map(([k]) => sql.identifier([k])), sql.fragment`, `)})
    VALUES (${sql.join(entries.map(([, v]) => bindValue(v)), sql.fragment`, `)})`;
}

/** `a = $1, b = $2, updated_at = now()` */
export function setColumns(values: Record<string, unknown>) {
  const parts = defined(values).map(([k, v]) => sql.fragment`${sql.identifier([k])} = ${bindValue(v)}`);
  parts.push(sql.fragment`updated_at = now()`);
  return sql.join(parts, sql.fragment`, `);
}

/** deletedAt on the wire: `{time, valid}` from a nullable deleted_at column. */
export function withDeletedAt<T extends { deleted_at: string | null }>(row: T): Omit<T, 'deleted_at'> & { deletedAt: { time: string | null; valid: boolean } } {
  const { deleted_at, ...rest } = row;
  return { ...rest, deletedAt: { time: deleted_at, valid: deleted_at !== null } };
}
