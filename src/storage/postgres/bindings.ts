/** Queries of namespaces and bindings (sql/postgres/003_upstreams.sql). */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { insertColumns, setColumns, withDeletedAt } from './row.js';
import { int, text, time, total } from './row-types.js';

// Row schemas: each read below is typed by one (./result-parser.ts).
const namespaceRow = z.object({ id: int, name: text, description: text, status: text, createdAt: time, updatedAt: time });
export type NamespaceRow = z.infer<typeof namespaceRow>;

const bindingRow = z
  .object({
    id: int,
    namespace: text,
    public_model: text,
    binding_key: text,
    group_id: int,
    selector_type: text,
    selector_value: text,
    weight: int,
    status: text,
    createdAt: time,
    updatedAt: time,
    deleted_at: time.nullable(),
  })
  .transform((r) => withDeletedAt(r));
export type BindingRow = z.infer<typeof bindingRow>;

const nsColumns = sql.fragment`id, name, description, status, created_at AS "createdAt", updated_at AS "updatedAt"`;
const bindingColumns = sql.fragment`id, namespace, public_model, namespace || '.' || public_model AS binding_key, group_id,
  selector_type, selector_value, weight, status, created_at AS "createdAt", updated_at AS "updatedAt", deleted_at`;

export async function insertNamespace(db: CommonQueryMethods, values: Record<string, unknown>): Promise<NamespaceRow> {
  return db.one(sql.type(namespaceRow)`INSERT INTO namespaces ${insertColumns(values)} RETURNING ${nsColumns}`);
}

export async function updateNamespace(db: CommonQueryMethods, name: string, values: Record<string, unknown>): Promise<NamespaceRow | null> {
  return db.maybeOne(sql.type(namespaceRow)`
    UPDATE namespaces SET ${setColumns(values)} WHERE name = ${name} RETURNING ${nsColumns}`);
}

export async function findNamespace(db: CommonQueryMethods, name: string): Promise<NamespaceRow | null> {
  return db.maybeOne(sql.type(namespaceRow)`SELECT ${nsColumns} FROM namespaces WHERE name = ${name}`);
}

export async function listNamespaces(db: CommonQueryMethods, q: { page: number; limit: number; search?: string; status?: string }) {
  const conds = [sql.fragment`true`];
  if (q.search) conds.push(sql.fragment`name ILIKE ${'%' + q.search + '%'}`);
  if (q.status) conds.push(sql.fragment`status = ${q.status}`);
  const where = sql.join(conds, sql.fragment` AND `);
  const count = await db.oneFirst(sql.type(total)`SELECT count(*)::int AS total FROM namespaces WHERE ${where}`);
  const rows = await db.any(sql.type(namespaceRow)`
    SELECT ${nsColumns} FROM namespaces WHERE ${where} ORDER BY id LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`);
  return { items: [...rows], total: count };
}

export async function insertBinding(db: CommonQueryMethods, values: Record<string, unknown>): Promise<BindingRow> {
  return db.one(sql.type(bindingRow)`INSERT INTO bindings ${insertColumns(values)} RETURNING ${bindingColumns}`);
}

export async function findBinding(db: CommonQueryMethods, id: number): Promise<BindingRow | null> {
  return db.maybeOne(sql.type(bindingRow)`SELECT ${bindingColumns} FROM bindings WHERE id = ${id} AND deleted_at IS NULL`);
}

export async function updateBindings(db: CommonQueryMethods, ids: number[], values: Record<string, unknown>): Promise<BindingRow[]> {
  return [...(await db.any(sql.type(bindingRow)`
    UPDATE bindings SET ${setColumns(values)}
    WHERE id = ANY(${sql.array(ids, 'int8')}) AND deleted_at IS NULL RETURNING ${bindingColumns}`))];
}

export async function deleteBinding(db: CommonQueryMethods, id: number): Promise<BindingRow | null> {
  return db.maybeOne(sql.type(bindingRow)`
    UPDATE bindings SET deleted_at = now(), updated_at = now() WHERE id = ${id} AND deleted_at IS NULL RETURNING ${bindingColumns}`);
}

export async function listBindings(
  db: CommonQueryMethods,
  q: { page: number; limit: number; namespace?: string; group_id?: number; status?: string; public_model?: string; search?: string },
) {
  const conds = [sql.fragment`deleted_at IS NULL`];
  if (q.namespace) conds.push(sql.fragment`namespace = ${q.namespace}`);
  if (q.group_id) conds.push(sql.fragment`group_id = ${q.group_id}`);
  if (q.status) conds.push(sql.fragment`status = ${q.status}`);
  if (q.public_model) conds.push(sql.fragment`public_model = ${q.public_model}`);
  if (q.search) conds.push(sql.fragment`(namespace || '.' || public_model) ILIKE ${'%' + q.search + '%'}`);
  const where = sql.join(conds, sql.fragment` AND `);
  const count = await db.oneFirst(sql.type(total)`SELECT count(*)::int AS total FROM bindings WHERE ${where}`);
  const rows = await db.any(sql.type(bindingRow)`
    SELECT ${bindingColumns} FROM bindings WHERE ${where} ORDER BY id LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`);
  return { items: [...rows], total: count };
}

/** Live bindings targeting a group. */
export async function bindingsOfGroup(db: CommonQueryMethods, groupId: number): Promise<BindingRow[]> {
  return [...(await db.any(sql.type(bindingRow)`
    SELECT ${bindingColumns} FROM bindings WHERE group_id = ${groupId} AND deleted_at IS NULL ORDER BY id`))];
}
