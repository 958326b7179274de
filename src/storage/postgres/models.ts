/** Queries of the model capability registry (sql/postgres/003_upstreams.sql). */
import { sql, type CommonQueryMethods } from 'slonik';
import { insertColumns, setColumns, withDeletedAt } from './row.js';

/** A model's prices as decimal text (numeric(38,12)); the input and output prices are null when unset. */
export interface PriceRow {
  name: string;
  cost_per_token: string;
  cost_per_input_token: string | null;
  cost_per_output_token: string | null;
}

export interface ModelRow {
  id: number;
  name: string;
  kind: string;
  context_window: number;
  max_output_tokens: number;
  /** The currency unit per token (docs/spend.md); input and output default to it when null. */
  cost_per_token: number;
  cost_per_input_token: number | null;
  cost_per_output_token: number | null;
  supports_fim: boolean;
  supports_functions: boolean;
  supports_tool_choice: boolean;
  supports_vision: boolean;
  source: string;
  createdAt: string;
  updatedAt: string;
  deletedAt: { time: string | null; valid: boolean };
}

const columns = sql.fragment`id, name, kind, context_window, max_output_tokens, cost_per_token, cost_per_input_token,
  cost_per_output_token, supports_fim,
  supports_functions, supports_tool_choice, supports_vision, source,
  created_at AS "createdAt", updated_at AS "updatedAt", deleted_at`;
const toModel = (r: unknown) => withDeletedAt(r as ModelRow & { deleted_at: string | null }) as ModelRow;

export async function listModels(db: CommonQueryMethods): Promise<ModelRow[]> {
  return (await db.any(sql.unsafe`SELECT ${columns} FROM models WHERE deleted_at IS NULL ORDER BY id`)).map(toModel);
}

/** Every live model's prices as exact decimal text, for the ingestion path's price map. */
export async function listPrices(db: CommonQueryMethods): Promise<PriceRow[]> {
  return (await db.any(sql.unsafe`
    SELECT name, cost_per_token::text AS cost_per_token, cost_per_input_token::text AS cost_per_input_token,
      cost_per_output_token::text AS cost_per_output_token
    FROM models WHERE deleted_at IS NULL`)) as unknown as PriceRow[];
}

export async function findModel(db: CommonQueryMethods, id: number): Promise<ModelRow | null> {
  const row = await db.maybeOne(sql.unsafe`SELECT ${columns} FROM models WHERE id = ${id} AND deleted_at IS NULL`);
  return row ? toModel(row) : null;
}

export async function insertModel(db: CommonQueryMethods, values: Record<string, unknown>): Promise<ModelRow> {
  return toModel(await db.one(sql.unsafe`INSERT INTO models ${insertColumns(values)} RETURNING ${columns}`));
}

export async function updateModel(db: CommonQueryMethods, id: number, values: Record<string, unknown>): Promise<ModelRow | null> {
  const row = await db.maybeOne(sql.unsafe`
    UPDATE models SET ${setColumns(values)} WHERE id = ${id} AND deleted_at IS NULL RETURNING ${columns}`);
  return row ? toModel(row) : null;
}

export async function deleteModel(db: CommonQueryMethods, id: number): Promise<ModelRow | null> {
  const row = await db.maybeOne(sql.unsafe`
    UPDATE models SET deleted_at = now(), updated_at = now() WHERE id = ${id} AND deleted_at IS NULL RETURNING ${columns}`);
  return row ? toModel(row) : null;
}

/** Inserts or overwrites registry entries by name; returns the names written. */
export async function upsertRegistryModels(db: CommonQueryMethods, entries: Array<Record<string, unknown>>): Promise<string[]> {
  const names: string[] = [];
  for (const e of entries) {
    // The entry is the whole model: a price it leaves out is cleared, not kept from an earlier refresh.
    const values = { cost_per_input_token: null, cost_per_output_token: null, ...e, source: 'registry' };
    const updated = await db.maybeOneFirst(sql.unsafe`
      UPDATE models SET ${setColumns(values)} WHERE name = ${e.name as string} AND deleted_at IS NULL RETURNING name`);
    if (updated === null) await db.query(sql.unsafe`INSERT INTO models ${insertColumns(values)}`);
    names.push(e.name as string);
  }
  return names;
}

/** Soft-deletes registry-sourced models not in `keep`; returns their names. */
export async function dropRegistryModelsExcept(db: CommonQueryMethods, keep: string[]): Promise<string[]> {
  return (await db.anyFirst(sql.unsafe`
    UPDATE models SET deleted_at = now(), updated_at = now()
    WHERE source = 'registry' AND deleted_at IS NULL AND NOT (name = ANY(${sql.array(keep, 'text')}))
    RETURNING name`)) as string[];
}

export interface RefreshRow {
  id: number;
  ref: string;
  source_url: string;
  version: string | null;
  models: Array<Record<string, unknown>>;
  applied_at: string;
}

export async function recordRefresh(db: CommonQueryMethods, r: { ref: string; source_url: string; version: string | null; models: unknown[] }): Promise<RefreshRow> {
  return (await db.one(sql.unsafe`
    INSERT INTO model_registry_refreshes (ref, source_url, version, models)
    VALUES (${r.ref}, ${r.source_url}, ${r.version}, ${sql.jsonb(r.models as never)})
    RETURNING id, ref, source_url, version, models, applied_at`)) as unknown as RefreshRow;
}

/** The live refreshes, newest first (rolled-back ones are skipped). */
export async function recentRefreshes(db: CommonQueryMethods, limit: number): Promise<RefreshRow[]> {
  return (await db.any(sql.unsafe`
    SELECT id, ref, source_url, version, models, applied_at FROM model_registry_refreshes
    WHERE NOT rolled_back ORDER BY id DESC LIMIT ${limit}`)) as unknown as RefreshRow[];
}

export async function markRolledBack(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE model_registry_refreshes SET rolled_back = true WHERE id = ${id}`);
}

export async function countRefreshes(db: CommonQueryMethods): Promise<number> {
  return (await db.oneFirst(sql.unsafe`SELECT count(*)::int FROM model_registry_refreshes WHERE NOT rolled_back`)) as number;
}
