/** Queries of the feature flag overrides (sql/postgres/001_foundation.sql). */
import { sql, type CommonQueryMethods } from 'slonik';

export async function readOverrides(db: CommonQueryMethods): Promise<Record<string, unknown>> {
  const rows = await db.any(sql.unsafe`SELECT name, value FROM feature_flags`);
  return Object.fromEntries((rows as Array<{ name: string; value: unknown }>).map((r) => [r.name, r.value]));
}

export async function writeOverride(db: CommonQueryMethods, name: string, value: unknown): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO feature_flags (name, value) VALUES (${name}, ${sql.jsonb(value as never)})
    ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`);
}

export async function clearOverride(db: CommonQueryMethods, name: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM feature_flags WHERE name = ${name}`);
}
