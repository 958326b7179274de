/** Queries of the feature flag overrides (sql/postgres/001_foundation.sql). */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { json, noRows, text } from './row-types.js';

/** One override: the flag's name and its JSON value. */
const override = z.object({ name: text, value: json });

export async function readOverrides(db: CommonQueryMethods): Promise<Record<string, unknown>> {
  const rows = await db.any(sql.type(override)`SELECT name, value FROM feature_flags`);
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

export async function writeOverride(db: CommonQueryMethods, name: string, value: unknown): Promise<void> {
  await db.query(noRows`
    INSERT INTO feature_flags (name, value) VALUES (${name}, ${sql.jsonb(value as never)})
    ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`);
}

export async function clearOverride(db: CommonQueryMethods, name: string): Promise<void> {
  await db.query(noRows`DELETE FROM feature_flags WHERE name = ${name}`);
}
