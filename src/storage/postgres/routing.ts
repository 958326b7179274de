/**
 * What the routing tables for the data plane are built from: groups with their
 * usable keys, bindings with their group and namespace, model capabilities.
 * Writers serialize on one advisory lock so versions and outbox order agree.
 */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { headers, idRow, int, num, text, texts } from './row-types.js';
import { modelCapabilities, type ModelCapabilities } from './models.js';

export type { ModelCapabilities };

/** Arbitrary constant: the routing writers' lock. */
const ROUTING_LOCK = 4_118_730_052;

/** Takes the routing lock for the rest of the transaction and returns the next routing version. */
export async function nextRoutingVersion(tx: CommonQueryMethods): Promise<number> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${ROUTING_LOCK})`);
  return tx.oneFirst(sql.type(z.object({ version: int }))`SELECT nextval('routing_version')::int8 AS version`);
}

// Row schemas: each read below is typed by one (./result-parser.ts).
const groupState = z.object({
  id: int,
  name: text,
  type: text,
  base_url: text,
  models: texts,
  status: text,
  deleted: z.boolean(),
  cloud_project: text.nullable(),
  cloud_location: text.nullable(),
  static_headers: headers,
  headers_profile: text,
});
export type GroupState = z.infer<typeof groupState>;

/** Times in Unix seconds. */
const usableKey = z.object({
  id: int,
  group_id: int,
  api_key: text,
  weight: int,
  access_token: text.nullable(),
  expires_at: int.nullable(),
  account_id: text.nullable(),
  project_id: text.nullable(),
  ban_until: int.nullable(),
});
export type UsableKey = z.infer<typeof usableKey>;

/** A binding as routing needs it: its row without timestamps, and its namespace's status. */
const bindingState = z.object({
  id: int,
  namespace: text,
  public_model: text,
  binding_key: text,
  group_id: int,
  selector_type: text,
  selector_value: text,
  weight: int,
  status: text,
  namespace_status: text,
});
export type BindingState = z.infer<typeof bindingState>;

const bindingKeyRow = z.object({ binding_key: text });

export async function groupsByIds(db: CommonQueryMethods, ids: number[]): Promise<GroupState[]> {
  return [...(await db.any(sql.type(groupState)`
    SELECT id, name, type, base_url, models, status, deleted_at IS NOT NULL AS deleted, cloud_project, cloud_location,
      static_headers, headers_profile
    FROM provider_groups WHERE id = ANY(${sql.array(ids, 'int8')})`))];
}

/** Keys the data plane may use: live, active, weight above 0, not banned at `nowMs`. */
export async function usableKeys(db: CommonQueryMethods, groupIds: number[], nowMs: number): Promise<UsableKey[]> {
  return [...(await db.any(sql.type(usableKey)`
    SELECT id, group_id, api_key, weight, access_token, floor(extract(epoch FROM expires_at))::int8 AS expires_at,
      account_id, project_id, floor(extract(epoch FROM ban_until))::int8 AS ban_until
    FROM upstream_keys
    WHERE group_id = ANY(${sql.array(groupIds, 'int8')}) AND deleted_at IS NULL AND status = 'active' AND weight > 0
      AND (ban_until IS NULL OR ban_until <= to_timestamp(${nowMs / 1000}))
    ORDER BY id`))];
}

/** Live bindings under the given bindingKeys. */
export async function bindingsByKeys(db: CommonQueryMethods, bindingKeys: string[]): Promise<BindingState[]> {
  return [...(await db.any(sql.type(bindingState)`
    SELECT b.id, b.namespace, b.public_model, b.namespace || '.' || b.public_model AS binding_key, b.group_id,
      b.selector_type, b.selector_value, b.weight, b.status, n.status AS namespace_status
    FROM bindings b JOIN namespaces n ON n.name = b.namespace
    WHERE b.deleted_at IS NULL AND (b.namespace || '.' || b.public_model) = ANY(${sql.array(bindingKeys, 'text')})
    ORDER BY b.id`))];
}

/** bindingKeys of live bindings that target these groups, use these upstream models or sit in these namespaces. */
export async function affectedBindingKeys(
  db: CommonQueryMethods,
  by: { groupIds?: number[]; models?: string[]; namespaces?: string[] },
): Promise<string[]> {
  return [...(await db.anyFirst(sql.type(bindingKeyRow)`
    SELECT DISTINCT namespace || '.' || public_model AS binding_key FROM bindings
    WHERE deleted_at IS NULL AND (group_id = ANY(${sql.array(by.groupIds ?? [], 'int8')})
      OR selector_value = ANY(${sql.array(by.models ?? [], 'text')})
      OR namespace = ANY(${sql.array(by.namespaces ?? [], 'text')}))`))];
}

export async function allBindingKeys(db: CommonQueryMethods): Promise<string[]> {
  return [...(await db.anyFirst(sql.type(bindingKeyRow)`
    SELECT DISTINCT namespace || '.' || public_model AS binding_key FROM bindings WHERE deleted_at IS NULL`))];
}

export async function allGroupIds(db: CommonQueryMethods): Promise<number[]> {
  return [...(await db.anyFirst(sql.type(idRow)`SELECT id FROM provider_groups WHERE deleted_at IS NULL`))];
}

export async function modelsByNames(db: CommonQueryMethods, names: string[]): Promise<ModelCapabilities[]> {
  return [...(await db.any(sql.type(modelCapabilities)`
    SELECT name, kind, context_window, max_output_tokens, cost_per_token, cost_per_input_token, cost_per_output_token, supports_fim, supports_functions,
      supports_tool_choice, supports_vision
    FROM models WHERE deleted_at IS NULL AND name = ANY(${sql.array(names, 'text')})`))];
}
