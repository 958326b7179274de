/** Queries of provider groups and upstream keys (sql/postgres/003_upstreams.sql). */
import { sql, type CommonQueryMethods } from 'slonik';
import { insertColumns, setColumns, withDeletedAt } from './row.js';

export interface GroupRow {
  id: number;
  name: string;
  type: string;
  base_url: string;
  models: string[];
  status: string;
  cloud_project: string | null;
  cloud_location: string | null;
  static_headers: Record<string, string>;
  headers_profile: string;
  createdAt: string;
  updatedAt: string;
  deletedAt: { time: string | null; valid: boolean };
}

export interface KeyRow {
  id: number;
  group_id: number;
  api_key: string;
  weight: number;
  status: string;
  auto_ban: boolean;
  ban_reason: string;
  ban_until: string | null;
  access_token: string | null;
  refresh_token: string | null;
  expires_at: string | null;
  account_id: string | null;
  project_id: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: { time: string | null; valid: boolean };
}

const groupColumns = sql.fragment`id, name, type, base_url, models, status, cloud_project, cloud_location,
  static_headers, headers_profile, created_at AS "createdAt", updated_at AS "updatedAt", deleted_at`;
const keyColumns = sql.fragment`id, group_id, api_key, weight, status, auto_ban, ban_reason, ban_until, access_token,
  refresh_token, expires_at, account_id, project_id, created_at AS "createdAt", updated_at AS "updatedAt", deleted_at`;

const toGroup = (r: unknown) => withDeletedAt(r as GroupRow & { deleted_at: string | null }) as GroupRow;
const toKey = (r: unknown) => withDeletedAt(r as KeyRow & { deleted_at: string | null }) as KeyRow;

export async function insertGroup(db: CommonQueryMethods, values: Record<string, unknown>): Promise<GroupRow> {
  return toGroup(await db.one(sql.unsafe`INSERT INTO provider_groups ${insertColumns(values)} RETURNING ${groupColumns}`));
}

export async function updateGroup(db: CommonQueryMethods, id: number, values: Record<string, unknown>): Promise<GroupRow | null> {
  const row = await db.maybeOne(sql.unsafe`
    UPDATE provider_groups SET ${setColumns(values)} WHERE id = ${id} AND deleted_at IS NULL RETURNING ${groupColumns}`);
  return row ? toGroup(row) : null;
}

export async function findGroup(db: CommonQueryMethods, id: number, lock = false): Promise<GroupRow | null> {
  const row = await db.maybeOne(sql.unsafe`
    SELECT ${groupColumns} FROM provider_groups WHERE id = ${id} AND deleted_at IS NULL ${lock ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
  return row ? toGroup(row) : null;
}

export async function listGroups(db: CommonQueryMethods, q: { page: number; limit: number; search?: string }) {
  const where = q.search
    ? sql.fragment`deleted_at IS NULL AND (name ILIKE ${'%' + q.search + '%'} OR type ILIKE ${'%' + q.search + '%'} OR base_url ILIKE ${'%' + q.search + '%'})`
    : sql.fragment`deleted_at IS NULL`;
  const total = (await db.oneFirst(sql.unsafe`SELECT count(*)::int FROM provider_groups WHERE ${where}`)) as number;
  const rows = await db.any(sql.unsafe`
    SELECT ${groupColumns} FROM provider_groups WHERE ${where} ORDER BY id LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`);
  return { items: rows.map(toGroup), total };
}

/** Soft-deletes a group and its keys. */
export async function deleteGroup(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE provider_groups SET deleted_at = now(), updated_at = now() WHERE id = ${id}`);
  await db.query(sql.unsafe`UPDATE upstream_keys SET deleted_at = now(), updated_at = now() WHERE group_id = ${id} AND deleted_at IS NULL`);
}

export async function insertKey(db: CommonQueryMethods, values: Record<string, unknown>): Promise<KeyRow> {
  return toKey(await db.one(sql.unsafe`INSERT INTO upstream_keys ${insertColumns(values)} RETURNING ${keyColumns}`));
}

export async function findKey(db: CommonQueryMethods, id: number): Promise<KeyRow | null> {
  const row = await db.maybeOne(sql.unsafe`SELECT ${keyColumns} FROM upstream_keys WHERE id = ${id} AND deleted_at IS NULL`);
  return row ? toKey(row) : null;
}

/** Updates live keys; returns the updated rows (missing ids are simply absent). */
export async function updateKeys(db: CommonQueryMethods, ids: number[], values: Record<string, unknown>): Promise<KeyRow[]> {
  const rows = await db.any(sql.unsafe`
    UPDATE upstream_keys SET ${setColumns(values)}
    WHERE id = ANY(${sql.array(ids, 'int8')}) AND deleted_at IS NULL RETURNING ${keyColumns}`);
  return rows.map(toKey);
}

export async function deleteKeys(db: CommonQueryMethods, ids: number[]): Promise<Array<{ id: number; group_id: number }>> {
  return (await db.any(sql.unsafe`
    UPDATE upstream_keys SET deleted_at = now(), updated_at = now()
    WHERE id = ANY(${sql.array(ids, 'int8')}) AND deleted_at IS NULL RETURNING id, group_id`)) as Array<{ id: number; group_id: number }>;
}

export async function listKeys(db: CommonQueryMethods, q: { page: number; limit: number; status?: string; group_id?: number; search?: string }) {
  const conds = [sql.fragment`deleted_at IS NULL`];
  if (q.status) conds.push(sql.fragment`status = ${q.status}`);
  if (q.group_id) conds.push(sql.fragment`group_id = ${q.group_id}`);
  if (q.search) conds.push(sql.fragment`(ban_reason ILIKE ${'%' + q.search + '%'} OR account_id ILIKE ${'%' + q.search + '%'} OR project_id ILIKE ${'%' + q.search + '%'})`);
  const where = sql.join(conds, sql.fragment` AND `);
  const total = (await db.oneFirst(sql.unsafe`SELECT count(*)::int FROM upstream_keys WHERE ${where}`)) as number;
  const rows = await db.any(sql.unsafe`
    SELECT ${keyColumns} FROM upstream_keys WHERE ${where} ORDER BY id LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`);
  return { items: rows.map(toKey), total };
}

/** Live group ids among `ids`. */
export async function existingGroupIds(db: CommonQueryMethods, ids: number[]): Promise<Set<number>> {
  const rows = await db.anyFirst(sql.unsafe`
    SELECT id FROM provider_groups WHERE id = ANY(${sql.array(ids, 'int8')}) AND deleted_at IS NULL`);
  return new Set(rows as number[]);
}

/** OAuth keys of the given group types whose access token expires before `before` (ms). */
export async function keysToRefresh(db: CommonQueryMethods, types: string[], beforeMs: number): Promise<Array<KeyRow & { type: string }>> {
  const rows = await db.any(sql.unsafe`
    SELECT k.id, k.group_id, k.refresh_token, g.type FROM upstream_keys k JOIN provider_groups g ON g.id = k.group_id
    WHERE k.deleted_at IS NULL AND g.deleted_at IS NULL AND k.status = 'active'
      AND g.type = ANY(${sql.array(types, 'text')}) AND k.refresh_token IS NOT NULL AND k.refresh_token <> ''
      AND (k.expires_at IS NULL OR k.expires_at <= to_timestamp(${beforeMs / 1000}))
    ORDER BY k.id`);
  return rows as unknown as Array<KeyRow & { type: string }>;
}

/** Keys whose ban has passed (ms): the ban is cleared and auto-disabled keys return to active. */
export async function liftExpiredBans(db: CommonQueryMethods, nowMs: number): Promise<Array<{ id: number; group_id: number }>> {
  return (await db.any(sql.unsafe`
    UPDATE upstream_keys SET ban_until = NULL, updated_at = now(),
      status = CASE WHEN status = 'auto_disabled' THEN 'active' ELSE status END
    WHERE deleted_at IS NULL AND ban_until IS NOT NULL AND ban_until <= to_timestamp(${nowMs / 1000})
    RETURNING id, group_id`)) as Array<{ id: number; group_id: number }>;
}
