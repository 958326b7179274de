/** Upstream key rules: a live group, a credential, admin status changes, masking. */
import type { CommonQueryMethods } from 'slonik';
import { implement, type BaseContext } from '../runtime/actor.js';
import { upstreamKeys } from './handles.js';
import { badRequest, notFound } from '../../errors.js';
import { deleteKeys, existingGroupIds, findKey, insertKey, listKeys, updateKeys, type KeyRow } from '../../storage/postgres/upstreams.js';
import { clampLimit } from '../../contract/page.js';
import { maskKey, unmasked } from './secrets.js';
import { routedChange } from './sync.js';

type KeyInput = Partial<Omit<KeyRow, 'id' | 'createdAt' | 'updatedAt' | 'deletedAt'>>;

/** An admin putting a key back to active lifts its ban too, unless the same request sets one. */
function withStatusRules(values: KeyInput): KeyInput {
  if (values.status !== 'active') return values;
  return { ban_until: null, ban_reason: '', ...values };
}

const hasCredential = (k: KeyInput) => !!(k.api_key || k.access_token || k.refresh_token);

/** 400 naming `prefix + field` when a key's group is unknown or it carries no credential. */
async function checkKeys(db: CommonQueryMethods, inputs: KeyInput[], prefix: (i: number) => string): Promise<void> {
  const groups = await existingGroupIds(db, inputs.filter((k) => k.group_id !== undefined).map((k) => k.group_id!));
  const errors: Record<string, string> = {};
  inputs.forEach((k, i) => {
    if (k.group_id !== undefined && !groups.has(k.group_id)) errors[`${prefix(i)}group_id`] = 'unknown provider group';
  });
  if (Object.keys(errors).length) throw badRequest('unknown provider group', errors);
}

async function createKeys(ctx: BaseContext, inputs: KeyInput[], prefix: (i: number) => string): Promise<KeyRow[]> {
  const missing = inputs.findIndex((k) => !hasCredential(k));
  if (missing >= 0) throw badRequest('an upstream key needs api_key, access_token or refresh_token', { [`${prefix(missing)}api_key`]: 'is required' });
  return routedChange(ctx, async (tx) => {
    await checkKeys(tx, inputs, prefix);
    const rows: KeyRow[] = [];
    for (const k of inputs) rows.push(await insertKey(tx, k));
    return { result: rows, affected: { groupIds: rows.map((r) => r.group_id) } };
  });
}

async function changeKeys(ctx: BaseContext, ids: number[], values: KeyInput): Promise<KeyRow[]> {
  return routedChange(ctx, async (tx) => {
    await checkKeys(tx, [values], () => '');
    const before = await Promise.all(ids.map((id) => findKey(tx, id)));
    const rows = await updateKeys(tx, ids, withStatusRules(ids.length === 1 && before[0] ? keepMasked(values, before[0]) : values));
    const groupIds = [...before.filter((k): k is KeyRow => !!k).map((k) => k.group_id), ...rows.map((r) => r.group_id)];
    return { result: rows, affected: { groupIds } };
  });
}

/** Secrets sent back as they were shown masked keep their stored values. */
function keepMasked(values: KeyInput, stored: KeyRow): KeyInput {
  const out = { ...values };
  if (out.api_key != null) out.api_key = unmasked(out.api_key, stored.api_key);
  if (out.access_token != null) out.access_token = unmasked(out.access_token, stored.access_token);
  if (out.refresh_token != null) out.refresh_token = unmasked(out.refresh_token, stored.refresh_token);
  return out;
}

export const keyHandlers = implement(upstreamKeys, {
  createKey: async ({ body }, ctx) => maskKey((await createKeys(ctx, [body], () => ''))[0]!),

  batchCreateKeys: async ({ body }, ctx) => {
    const rows = await createKeys(ctx, body.items, (i) => `items.${i}.`);
    return { items: rows.map(maskKey), total: rows.length };
  },

  listKeys: async ({ query }, ctx) => {
    const limit = clampLimit(query.limit);
    const { items, total } = await listKeys(ctx.db, { ...query, limit });
    return { items: items.map(maskKey), total, page: query.page, limit };
  },

  /** The one place an upstream secret is returned whole. */
  getKey: async ({ params }, ctx) => {
    const k = await findKey(ctx.db, params.id);
    if (!k) throw notFound('upstream key', { id: params.id });
    return k;
  },

  updateKey: async ({ params, body }, ctx) => {
    const [row] = await changeKeys(ctx, [params.id], body);
    if (!row) throw notFound('upstream key', { id: params.id });
    return maskKey(row);
  },

  batchKeyStatus: async ({ body }, ctx) => {
    const rows = await changeKeys(ctx, body.ids, { status: body.status });
    const found = new Set(rows.map((r) => r.id));
    return { updated: rows.length, ids: rows.map((r) => r.id), not_found: body.ids.filter((id) => !found.has(id)) };
  },

  deleteKey: async ({ params }, ctx) => {
    const gone = await removeKeys(ctx, [params.id]);
    if (gone.length === 0) throw notFound('upstream key', { id: params.id });
    return { id: params.id, deleted: true };
  },

  batchDeleteKeys: async ({ body }, ctx) => {
    const gone = new Set((await removeKeys(ctx, body.ids)).map((k) => k.id));
    return { deleted: gone.size, ids: [...gone], not_found: body.ids.filter((id) => !gone.has(id)) };
  },
});

function removeKeys(ctx: BaseContext, ids: number[]) {
  return routedChange(ctx, async (tx) => {
    const gone = await deleteKeys(tx, ids);
    return { result: gone, affected: { groupIds: gone.map((k) => k.group_id) } };
  });
}
