/**
 * Admin operations on masters (tenants), and master-key authentication.
 * Deleting or resetting raises the epoch: keys issued under an older epoch
 * fail at once, here and in the data plane (the store carries both numbers).
 */
import { defineActor, implement } from '../runtime/actor.js';
import { masters } from './handles.js';
import { conflict, notFound } from '../../errors.js';
import { clampLimit } from '../../contract/page.js';
import {
  getKey, getMaster, insertMaster, listKeys, listMasters, masterByDigest, setMasterKeysAccess, updateKey, updateMaster,
  type MasterRow,
} from '../../storage/postgres/tenancy.js';
import { budgetUpdate, newBudget } from './budget.js';
import { commit } from './commit.js';
import { issueKey } from './issue.js';
import { masterMetaOp, tokenMetaOp } from '../../storage/redis/writers/tenancy.js';
import { newSecret } from './tokens.js';
import { snapshotTenancy } from './snapshot.js';
import { namespaces } from './validate.js';
import { keyView, masterView } from './views.js';
import type { MasterLookup } from './identity-cache.js';
import type { CommonQueryMethods } from 'slonik';


async function liveMaster(tx: CommonQueryMethods, id: number): Promise<MasterRow> {
  const m = await getMaster(tx, id, true);
  if (!m) throw notFound('master', { id });
  return m;
}

export default defineActor({
  name: 'masters',
  placement: 'worker',
  handlers: {
    ...implement(masters, {
      create: ({ body }, ctx) =>
        commit(ctx, 'masters', async (tx) => {
          const secret = newSecret('mk');
          const m = await insertMaster(tx, {
            name: body.name,
            group: body.group,
            keyDigest: secret.hash,
            keyPrefix: secret.prefix,
            maxChildKeys: body.max_child_keys ?? 100,
            globalQps: body.global_qps ?? 0,
            budget: newBudget(body, ctx.now()),
          });
          return { result: { ...masterView(m), master_key: secret.secret }, ops: [masterMetaOp(m)], ids: [m.id] };
        }),

      list: async ({ query }, ctx) => {
        const limit = clampLimit(query.limit);
        const { rows, total } = await listMasters(ctx.db, { offset: (query.page - 1) * limit, limit, search: query.search });
        return { items: rows.map(masterView), total, page: query.page, limit };
      },

      update: ({ params, body }, ctx) =>
        commit(ctx, 'masters', async (tx) => {
          const cur = await liveMaster(tx, params.id);
          const { budget, budget_period, ...rest } = body;
          const m = await updateMaster(tx, params.id, { ...rest, ...budgetUpdate({ budget, budget_period }, cur, ctx.now()) });
          return { result: masterView(m), ops: [masterMetaOp(m)], ids: [m.id] };
        }),

      remove: ({ params }, ctx) =>
        commit(ctx, 'masters', async (tx) => {
          const cur = await liveMaster(tx, params.id);
          const m = await updateMaster(tx, params.id, { deleted_at: { ts: new Date(ctx.now()).toISOString() }, epoch: cur.epoch + 1 });
          return { result: masterView(m), ops: [masterMetaOp(m, true)], ids: [m.id] };
        }),

      freeze: ({ params }, ctx) => setStatus(ctx, params.id, 'suspended'),
      unfreeze: ({ params }, ctx) => setStatus(ctx, params.id, 'active'),

      resetKey: ({ params }, ctx) =>
        commit(ctx, 'masters', async (tx) => {
          const cur = await liveMaster(tx, params.id);
          const secret = newSecret('mk');
          const m = await updateMaster(tx, params.id, { key_digest: secret.hash, key_prefix: secret.prefix, epoch: cur.epoch + 1 });
          return { result: { ...masterView(m), master_key: secret.secret }, ops: [masterMetaOp(m)], ids: [m.id] };
        }),

      access: (
        { params, body },
        ctx,
      ) =>
        commit(ctx, 'masters', async (tx) => {
          const cur = await liveMaster(tx, params.id);
          const ns = namespaces(body.default_namespace ?? cur.default_namespace, body.allowed_namespaces ?? cur.allowed_namespaces);
          const m = await updateMaster(tx, params.id, ns);
          const keys = body.propagate ? await setMasterKeysAccess(tx, m.id, ns.default_namespace, ns.allowed_namespaces) : [];
          return {
            result: { ...masterView(m), propagated_keys: keys.length },
            ops: [masterMetaOp(m), ...keys.map(tokenMetaOp)],
            ids: [m.id],
          };
        }),

      listKeys: async ({ params, query }, ctx) => {
        if (!(await getMaster(ctx.db, params.id))) throw notFound('master', { id: params.id });
        const limit = clampLimit(query.limit);
        const { rows, total } = await listKeys(ctx.db, params.id, { offset: (query.page - 1) * limit, limit, search: query.search });
        return { items: rows.map(keyView), total, page: query.page, limit };
      },

      issueKey: ({ params, body }, ctx) => issueKey(ctx, params.id, body, 'admin'),

      revokeKey: ({ params }, ctx) =>
        revoke(ctx, params.keyId, params.id),

    }),

    get: async ({ params }: { params: { id: number } }, ctx) => {
      const m = await getMaster(ctx.db, params.id);
      if (!m) throw notFound('master', { id: params.id });
      return masterView(m);
    },

    /** Every master and key into the outbox, for a full store snapshot. */
    snapshot: (_: unknown, ctx) => snapshotTenancy(ctx),

    /** Master-key authentication by digest; deleted and legacy (digest-less) masters never match. */
    authenticate: async ({ tokenHash }: { tokenHash: string }, ctx): Promise<MasterLookup | null> => {
      const m = await masterByDigest(ctx.db, tokenHash);
      if (!m) return null;
      return { identity: { id: m.id, name: m.name, group: m.group, epoch: m.epoch, status: m.status }, view: masterView(m) };
    },
  },
});

function setStatus(ctx: Parameters<typeof commit>[0], id: number, status: 'active' | 'suspended') {
  return commit(ctx, 'masters', async (tx) => {
    await liveMaster(tx, id);
    const m = await updateMaster(tx, id, { status });
    return { result: masterView(m), ops: [masterMetaOp(m)], ids: [m.id] };
  });
}

/** Revokes a key (of `masterId` when given): final, 409 when already revoked. */
export function revoke(ctx: Parameters<typeof commit>[0], keyId: number, masterId?: number) {
  return commit(ctx, 'keys', async (tx) => {
    const cur = await getKey(tx, keyId, masterId, true);
    if (!cur) throw notFound('key', { id: keyId });
    if (cur.revoked) throw conflict('the key is already revoked', { id: keyId });
    const k = await updateKey(tx, keyId, { revoked: true, revoked_at: { ts: new Date(ctx.now()).toISOString() } });
    return { result: keyView(k), ops: [tokenMetaOp(k)], ids: [k.id] };
  });
}
