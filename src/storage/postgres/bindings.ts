/** Queries of namespaces and bindings (sql/postgres/003_upstreams.sql). */
import { sql, type CommonQueryMethods } from 'slonik';
import { insertColumns, setColumns, withDeletedAt } from './row.js';

export interface NamespaceRow {
  id: number;
  name: string;
  description: string;
  status: string;
  createdAt: string;
  updatedAt: string;
}

export interface BindingRow {
  id: number;
  namespace: string;
  public_model: string;
  binding_key: string;
  group_id: number;
  selector_type: string;
  selector_value: string;
  weight: number;
  status: string;
  createdAt: string;
  updatedAt: string;
  deletedAt: { time: string | null; valid: boolean };
}

const nsColumns = sql.fragment`id, name, description, status, created_at AS "createdAt", updated_at AS "updatedAt"`;
const bindingColumns = sql.fragment`id, namespace, public_model, namespace || '.' || public_model AS binding_key, group_id,
  selector_type, selector_value, weight, status, created_at AS "createdAt", updated_at AS "updatedAt", deleted_at`;
const toBinding = (r: unknown) => withDeletedAt(r as BindingRow & { deleted_at: string | null }) as BindingRow;

export async function insertNamespace(db: CommonQueryMethods, values: Record<string, unknown>): Promise<NamespaceRow> {
  return (await db.one(sql.unsafe`INSERT INTO namespaces ${insertColumns(values)} RETURNING ${nsColumns}`)) as unknown as NamespaceRow;
}

export async function updateNamespace(db: CommonQueryMethods, name: string, values: Record<string, unknown>): Promise<NamespaceRow | null> {
  return (await db.maybeOne(sql.unsafe`
    UPDATE namespaces SET ${setColumns(values)} WHERE name = ${name} RETURNING ${nsColumns}`)) as unknown as NamespaceRow | null;
}

export async function findNamespace(db: CommonQueryMethods, name: string): Promise<NamespaceRow | null> {
  return (await db.maybeOne(sql.unsafe`SELECT ${nsColumns} FROM namespaces WHERE name = ${name}`)) as unknown as NamespaceRow | null;
}

export async function listNamespaces(db: CommonQueryMethods, q: { page: number; limit: number; search?: string; status?: string }) {
  const conds = [sql.fragment`true`];
  if (q.search) conds.push(sql.fragment`name ILIKE ${'%' + q.search + '%'}`);
  if (q.status) conds.push(sql.fragment`status = ${q.status}`);
  const where = sql.join(conds, sql.fragment` AND `);
  const total = (await db.oneFirst(sql.unsafe`SELECT count(*)::int FROM namespaces WHERE ${where}`)) as number;
  const rows = await db.any(sql.unsafe`
    SELECT ${nsColumns} FROM namespaces WHERE ${where} ORDER BY id LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`);
  return { items: rows as unknown as NamespaceRow[], total };
}

export async function insertBinding(db: CommonQueryMethods, values: Record<string, unknown>): Promise<BindingRow> {
  return toBinding(await db.one(sql.unsafe`INSERT INTO bindings ${insertColumns(values)} RETURNING ${bindingColumns}`));
}

export async function findBinding(db: CommonQueryMethods, id: number): Promise<BindingRow | null> {
  const row = await db.maybeOne(sql.unsafe`SELECT ${bindingColumns} FROM bindings WHERE id = ${id} AND deleted_at IS NULL`);
  return row ? toBinding(row) : null;
}

export async function updateBindings(db: CommonQueryMethods, ids: number[], values: Record<string, unknown>): Promise<BindingRow[]> {
  const rows = await db.any(sql.unsafe`
    UPDATE bindings SET ${setColumns(values)}
    WHERE id = ANY(${sql.array(ids, 'int8')}) AND deleted_at IS NULL RETURNING ${bindingColumns}`);
  return rows.map(toBinding);
}

export async function deleteBinding(db: CommonQueryMethods, id: number): Promise<BindingRow | null> {
  const row = await db.maybeOne(sql.unsafe`
    UPDATE bindings SET deleted_at = now(), updated_at = now() WHERE id = ${id} AND deleted_at IS NULL RETURNING ${bindingColumns}`);
  return row ? toBinding(row) : null;
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
  const total = (await db.oneFirst(sql.unsafe`SELECT count(*)::int FROM bindings WHERE ${where}`)) as number;
  const rows = await db.any(sql.unsafe`
    SELECT ${bindingColumns} FROM bindings WHERE ${where} ORDER BY id LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`);
  return { items: rows.map(toBinding), total };
}

/** Live bindings targeting a group. */
export async function bindingsOfGroup(db: CommonQueryMethods, groupId: number): Promise<BindingRow[]> {
  return (await db.any(sql.unsafe`
    SELECT ${bindingColumns} FROM bindings WHERE group_id = ${groupId} AND deleted_at IS NULL ORDER BY id`)).map(toBinding);
}
