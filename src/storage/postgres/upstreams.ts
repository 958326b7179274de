/** Queries of provider groups and upstream keys (sql/postgres/003_upstreams.sql). */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { insertColumns, setColumns, withDeletedAt } from './row.js';
import { headers, idRow, int, noRows, text, texts, time, total } from './row-types.js';

// Row schemas: each read below is typed by one (./result-parser.ts); deleted_at leaves as `deletedAt: {time, valid}`.
const groupRow = z
  .object({
    id: int,
    name: text,
    type: text,
    base_url: text,
    models: texts,
    status: text,
    cloud_project: text.nullable(),
    cloud_location: text.nullable(),
    static_headers: headers,
    headers_profile: text,
    createdAt: time,
    updatedAt: time,
    deleted_at: time.nullable(),
  })
  .transform((r) => withDeletedAt(r));
export type GroupRow = z.infer<typeof groupRow>;

const keyRow = z
  .object({
    id: int,
    group_id: int,
    api_key: text,
    weight: int,
    status: text,
    auto_ban: z.boolean(),
    ban_reason: text,
    ban_until: time.nullable(),
    access_token: text.nullable(),
    refresh_token: text.nullable(),
    expires_at: time.nullable(),
    account_id: text.nullable(),
    project_id: text.nullable(),
    createdAt: time,
    updatedAt: time,
    deleted_at: time.nullable(),
  })
  .transform((r) => withDeletedAt(r));
export type KeyRow = z.infer<typeof keyRow>;

/** A key of a group, by id: what a change reports so the routing of that group is re-written. */
const keyOfGroup = z.object({ id: int, group_id: int });
/** An OAuth key due for a refresh, with its group's type. */
const refreshDue = z.object({ id: int, group_id: int, refresh_token: text.nullable(), type: text });
export type RefreshDue = z.infer<typeof refreshDue>;

const groupColumns = sql.fragment`id, name, type, base_url, models, status, cloud_project, cloud_location,
  static_headers, headers_profile, created_at AS "createdAt", updated_at AS "updatedAt", deleted_at`;
const keyColumns = sql.fragment`id, group_id, api_key, weight, status, auto_ban, ban_reason, ban_until, access_token,
  refresh_token, expires_at, account_id, project_id, created_at AS "createdAt", updated_at AS "updatedAt", deleted_at`;

export async function insertGroup(db: CommonQueryMethods, values: Record<string, unknown>): Promise<GroupRow> {
  return db.one(sql.type(groupRow)`INSERT INTO provider_groups ${insertColumns(values)} RETURNING ${groupColumns}`);
}

export async function updateGroup(db: CommonQueryMethods, id: number, values: Record<string, unknown>): Promise<GroupRow | null> {
  return db.maybeOne(sql.type(groupRow)`
    UPDATE provider_groups SET ${setColumns(values)} WHERE id = ${id} AND deleted_at IS NULL RETURNING ${groupColumns}`);
}

export async function findGroup(db: CommonQueryMethods, id: number, lock = false): Promise<GroupRow | null> {
  return db.maybeOne(sql.type(groupRow)`
    SELECT ${groupColumns} FROM provider_groups WHERE id = ${id} AND deleted_at IS NULL ${lock ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
}

export async function listGroups(db: CommonQueryMethods, q: { page: number; limit: number; search?: string }) {
  const where = q.search
    ? sql.fragment`deleted_at IS NULL AND (name ILIKE ${'%' + q.search + '%'} OR type ILIKE ${'%' + q.search + '%'} OR base_url ILIKE ${'%' + q.search + '%'})`
    : sql.fragment`deleted_at IS NULL`;
  const count = await db.oneFirst(sql.type(total)`SELECT count(*)::int AS total FROM provider_groups WHERE ${where}`);
  const rows = await db.any(sql.type(groupRow)`
    SELECT ${groupColumns} FROM provider_groups WHERE ${where} ORDER BY id LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`);
  return { items: [...rows], total: count };
}

/** Soft-deletes a group and its keys. */
export async function deleteGroup(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(noRows`UPDATE provider_groups SET deleted_at = now(), updated_at = now() WHERE id = ${id}`);
  await db.query(noRows`UPDATE upstream_keys SET deleted_at = now(), updated_at = now() WHERE group_id = ${id} AND deleted_at IS NULL`);
}

export async function insertKey(db: CommonQueryMethods, values: Record<string, unknown>): Promise<KeyRow> {
  return db.one(sql.type(keyRow)`INSERT INTO upstream_keys ${insertColumns(values)} RETURNING ${keyColumns}`);
}

export async function findKey(db: CommonQueryMethods, id: number): Promise<KeyRow | null> {
  return db.maybeOne(sql.type(keyRow)`SELECT ${keyColumns} FROM upstream_keys WHERE id = ${id} AND deleted_at IS NULL`);
}

/** Updates live keys; returns the updated rows (missing ids are simply absent). */
export async function updateKeys(db: CommonQueryMethods, ids: number[], values: Record<string, unknown>): Promise<KeyRow[]> {
  return [...(await db.any(sql.type(keyRow)`
    UPDATE upstream_keys SET ${setColumns(values)}
    WHERE id = ANY(${sql.array(ids, 'int8')}) AND deleted_at IS NULL RETURNING ${keyColumns}`))];
}

export async function deleteKeys(db: CommonQueryMethods, ids: number[]): Promise<Array<{ id: number; group_id: number }>> {
  return [...(await db.any(sql.type(keyOfGroup)`
    UPDATE upstream_keys SET deleted_at = now(), updated_at = now()
    WHERE id = ANY(${sql.array(ids, 'int8')}) AND deleted_at IS NULL RETURNING id, group_id`))];
}

export async function listKeys(db: CommonQueryMethods, q: { page: number; limit: number; status?: string; group_id?: number; search?: string }) {
  const conds = [sql.fragment`deleted_at IS NULL`];
  if (q.status) conds.push(sql.fragment`status = ${q.status}`);
  if (q.group_id) conds.push(sql.fragment`group_id = ${q.group_id}`);
  if (q.search) conds.push(sql.fragment`(ban_reason ILIKE ${'%' + q.search + '%'} OR account_id ILIKE ${'%' + q.search + '%'} OR project_id ILIKE ${'%' + q.search + '%'})`);
  const where = sql.join(conds, sql.fragment` AND `);
  const count = await db.oneFirst(sql.type(total)`SELECT count(*)::int AS total FROM upstream_keys WHERE ${where}`);
  const rows = await db.any(sql.type(keyRow)`
    SELECT ${keyColumns} FROM upstream_keys WHERE ${where} ORDER BY id LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`);
  return { items: [...rows], total: count };
}

/** Live group ids among `ids`. */
export async function existingGroupIds(db: CommonQueryMethods, ids: number[]): Promise<Set<number>> {
  const rows = await db.anyFirst(sql.type(idRow)`
    SELECT id FROM provider_groups WHERE id = ANY(${sql.array(ids, 'int8')}) AND deleted_at IS NULL`);
  return new Set(rows);
}

/** OAuth keys of the given group types whose access token expires before `before` (ms). */
export async function keysToRefresh(db: CommonQueryMethods, types: string[], beforeMs: number): Promise<RefreshDue[]> {
  const rows = await db.any(sql.type(refreshDue)`
    SELECT k.id, k.group_id, k.refresh_token, g.type FROM upstream_keys k JOIN provider_groups g ON g.id = k.group_id
    WHERE k.deleted_at IS NULL AND g.deleted_at IS NULL AND k.status = 'active'
      AND g.type = ANY(${sql.array(types, 'text')}) AND k.refresh_token IS NOT NULL AND k.refresh_token <> ''
      AND (k.expires_at IS NULL OR k.expires_at <= to_timestamp(${beforeMs / 1000}))
    ORDER BY k.id`);
  return [...rows];
}

/** Keys whose ban has passed (ms): the ban is cleared and auto-disabled keys return to active. */
export async function liftExpiredBans(db: CommonQueryMethods, nowMs: number): Promise<Array<{ id: number; group_id: number }>> {
  return [...(await db.any(sql.type(keyOfGroup)`
    UPDATE upstream_keys SET ban_until = NULL, updated_at = now(),
      status = CASE WHEN status = 'auto_disabled' THEN 'active' ELSE status END
    WHERE deleted_at IS NULL AND ban_until IS NOT NULL AND ban_until <= to_timestamp(${nowMs / 1000})
    RETURNING id, group_id`))];
}
