/** Queries of the model capability registry (sql/postgres/003_upstreams.sql). */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { insertColumns, setColumns, withDeletedAt } from './row.js';
import { decimal, int, jsonObject, noRows, num, text, time, total } from './row-types.js';

/** `RETURNING name`. */
const named = z.object({ name: text });

// Row schemas: each read below is typed by one (./result-parser.ts).
/** A model's prices as decimal text (numeric(38,12)); the input and output prices are null when unset. */
const priceRow = z.object({ name: text, cost_per_token: decimal, cost_per_input_token: decimal.nullable(), cost_per_output_token: decimal.nullable() });
export type PriceRow = z.infer<typeof priceRow>;

const modelFields = z.object({
  id: int,
  name: text,
  kind: text,
  context_window: int,
  max_output_tokens: int,
  /** The currency unit per token (docs/spend.md); input and output default to it when null. */
  cost_per_token: num,
  cost_per_input_token: num.nullable(),
  cost_per_output_token: num.nullable(),
  supports_fim: z.boolean(),
  supports_functions: z.boolean(),
  supports_tool_choice: z.boolean(),
  supports_vision: z.boolean(),
  source: text,
  createdAt: time,
  updatedAt: time,
  deleted_at: time.nullable(),
});
const modelRow = modelFields.transform((r) => withDeletedAt(r));
export type ModelRow = z.infer<typeof modelRow>;

/** A model's capabilities and prices: what a binding snapshot aggregates (routing.ts), read by the same row schema. */
export const modelCapabilities = modelFields.omit({ id: true, source: true, createdAt: true, updatedAt: true, deleted_at: true });
export type ModelCapabilities = z.infer<typeof modelCapabilities>;

const refreshRow = z.object({ id: int, ref: text, source_url: text, version: text.nullable(), models: z.array(jsonObject), applied_at: time });
export type RefreshRow = z.infer<typeof refreshRow>;

const columns = sql.fragment`id, name, kind, context_window, max_output_tokens, cost_per_token, cost_per_input_token,
  cost_per_output_token, supports_fim,
  supports_functions, supports_tool_choice, supports_vision, source,
  created_at AS "createdAt", updated_at AS "updatedAt", deleted_at`;

export async function listModels(db: CommonQueryMethods): Promise<ModelRow[]> {
  return [...(await db.any(sql.type(modelRow)`SELECT ${columns} FROM models WHERE deleted_at IS NULL ORDER BY id`))];
}

/** Every live model's prices as exact decimal text, for the ingestion path's price map. */
export async function listPrices(db: CommonQueryMethods): Promise<PriceRow[]> {
  return [...(await db.any(sql.type(priceRow)`
    SELECT name, cost_per_token::text AS cost_per_token, cost_per_input_token::text AS cost_per_input_token,
      cost_per_output_token::text AS cost_per_output_token
    FROM models WHERE deleted_at IS NULL`))];
}

export async function findModel(db: CommonQueryMethods, id: number): Promise<ModelRow | null> {
  return db.maybeOne(sql.type(modelRow)`SELECT ${columns} FROM models WHERE id = ${id} AND deleted_at IS NULL`);
}

export async function insertModel(db: CommonQueryMethods, values: Record<string, unknown>): Promise<ModelRow> {
  return db.one(sql.type(modelRow)`INSERT INTO models ${insertColumns(values)} RETURNING ${columns}`);
}

export async function updateModel(db: CommonQueryMethods, id: number, values: Record<string, unknown>): Promise<ModelRow | null> {
  return db.maybeOne(sql.type(modelRow)`
    UPDATE models SET ${setColumns(values)} WHERE id = ${id} AND deleted_at IS NULL RETURNING ${columns}`);
}

export async function deleteModel(db: CommonQueryMethods, id: number): Promise<ModelRow | null> {
  return db.maybeOne(sql.type(modelRow)`
    UPDATE models SET deleted_at = now(), updated_at = now() WHERE id = ${id} AND deleted_at IS NULL RETURNING ${columns}`);
}

/** Inserts or overwrites registry entries by name; returns the names written. */
export async function upsertRegistryModels(db: CommonQueryMethods, entries: Array<Record<string, unknown>>): Promise<string[]> {
  const names: string[] = [];
  for (const e of entries) {
    // The entry is the whole model: a price it leaves out is cleared, not kept from an earlier refresh.
    const values = { cost_per_input_token: null, cost_per_output_token: null, ...e, source: 'registry' };
    const updated = await db.maybeOneFirst(sql.type(named)`
      UPDATE models SET ${setColumns(values)} WHERE name = ${e.name as string} AND deleted_at IS NULL RETURNING name`);
    if (updated === null) await db.query(noRows`INSERT INTO models ${insertColumns(values)}`);
    names.push(e.name as string);
  }
  return names;
}

/** Soft-deletes registry-sourced models not in `keep`; returns their names. */
export async function dropRegistryModelsExcept(db: CommonQueryMethods, keep: string[]): Promise<string[]> {
  return [...(await db.anyFirst(sql.type(named)`
    UPDATE models SET deleted_at = now(), updated_at = now()
    WHERE source = 'registry' AND deleted_at IS NULL AND NOT (name = ANY(${sql.array(keep, 'text')}))
    RETURNING name`))];
}

export async function recordRefresh(db: CommonQueryMethods, r: { ref: string; source_url: string; version: string | null; models: unknown[] }): Promise<RefreshRow> {
  return db.one(sql.type(refreshRow)`
    INSERT INTO model_registry_refreshes (ref, source_url, version, models)
    VALUES (${r.ref}, ${r.source_url}, ${r.version}, ${sql.jsonb(r.models as never)})
    RETURNING id, ref, source_url, version, models, applied_at`);
}

/** The live refreshes, newest first (rolled-back ones are skipped). */
export async function recentRefreshes(db: CommonQueryMethods, limit: number): Promise<RefreshRow[]> {
  return [...(await db.any(sql.type(refreshRow)`
    SELECT id, ref, source_url, version, models, applied_at FROM model_registry_refreshes
    WHERE NOT rolled_back ORDER BY id DESC LIMIT ${limit}`))];
}

export async function markRolledBack(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(noRows`UPDATE model_registry_refreshes SET rolled_back = true WHERE id = ${id}`);
}

export async function countRefreshes(db: CommonQueryMethods): Promise<number> {
  return db.oneFirst(sql.type(total)`SELECT count(*)::int AS total FROM model_registry_refreshes WHERE NOT rolled_back`);
}
