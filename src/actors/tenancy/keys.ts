/**
 * Child keys: the tenant's own operations under /v1 (always filtered by the
 * calling master, so another tenant's key is simply not found), the admin's
 * key endpoints, and the database side of key authentication.
 */
import { defineActor, implement, type BaseContext } from '../runtime/actor.js';
import { childKeys } from './handles.js';
import type { Principal } from '../../contract/principal.js';
import { conflict, forbidden, notFound } from '../../errors.js';
import { clampLimit } from '../../contract/page.js';
import { getKey, getMaster, keyByHash, listKeys, updateKey } from '../../storage/postgres/tenancy.js';
import { budgetUpdate } from './budget.js';
import { commit } from './commit.js';
import { issueKey } from './issue.js';
import { revoke } from './masters.js';
import { tokenMetaOp } from '../../storage/redis/writers/tenancy.js';
import { keyUsable } from './metadata.js';
import { periodStart } from './quota.js';
import { expiry, ipList, nameList, namespaces } from './validate.js';
import { keyIdentity, keyView } from './views.js';

/** The calling master's id; a suspended master may authenticate but not act (403). */
function tenant(principal: Principal): number {
  if (principal.type !== 'master') throw forbidden('a master key is required');
  const status = (principal as { status?: string }).status;
  if (status !== 'active') throw forbidden('the master is not active', { status });
  return principal.id;
}

/** Applies a change to one unrevoked key (of `masterId` when given). */
function changeKey(
  ctx: BaseContext,
  id: number,
  masterId: number | undefined,
  fields: (cur: NonNullable<Awaited<ReturnType<typeof getKey>>>, masterAllowed: string[]) => Record<string, unknown>,
) {
  return commit(ctx, 'keys', async (tx) => {
    const cur = await getKey(tx, id, masterId, true);
    if (!cur) throw notFound('key', { id });
    if (cur.revoked) throw conflict('the key is revoked', { id });
    const master = await getMaster(tx, cur.master_id);
    const k = await updateKey(tx, id, fields(cur, master?.allowed_namespaces ?? []));
    return { result: keyView(k), ops: [tokenMetaOp(k)], ids: [k.id] };
  });
}

export default defineActor({
  name: 'child-keys',
  placement: 'worker',
  handlers: {
    ...implement(childKeys, {
      // Tenant (/v1/tokens).
      issue: ({ principal, body }, ctx) => issueKey(ctx, tenant(principal), body, 'master'),

      list: async ({ principal, query }, ctx) => {
        const limit = clampLimit(query.limit);
        const { rows, total } = await listKeys(ctx.db, tenant(principal), { offset: (query.page - 1) * limit, limit, search: query.search });
        return { items: rows.map(keyView), total, page: query.page, limit };
      },

      get: async ({ principal, params }, ctx) => {
        const k = await getKey(ctx.db, params.id, tenant(principal));
        if (!k) throw notFound('key', { id: params.id });
        return keyView(k);
      },

      // PUT /v1/tokens/{id} (a master, its own keys) and PUT /admin/keys/{id} (the admin, any master's key).
      update: ({ principal, params, body }, ctx) =>
        changeKey(ctx, params.id, principal.type === 'admin' ? undefined : tenant(principal), (cur, masterAllowed) => {
          const now = ctx.now();
          const fields: Record<string, unknown> = {};
          for (const f of ['name', 'scopes', 'quota_limit', 'model_limits_enabled', 'status'] as const) {
            if (body[f] !== undefined) fields[f] = body[f];
          }
          if (body.model_limits !== undefined) fields.model_limits = nameList(body.model_limits);
          if (body.allow_ips !== undefined) fields.allow_ips = ipList('allow_ips', body.allow_ips);
          if (body.deny_ips !== undefined) fields.deny_ips = ipList('deny_ips', body.deny_ips);
          if (body.expires_at !== undefined) fields.expires_at = { ts: expiry(body.expires_at, now) };
          if (body.quota_reset_type !== undefined && body.quota_reset_type !== cur.quota_reset_type) {
            fields.quota_reset_type = body.quota_reset_type;
            fields.quota_period_start = { ts: periodStart(body.quota_reset_type, now) };
          }
          Object.assign(fields, budgetUpdate(body, cur, now));
          if (body.default_namespace !== undefined || body.allowed_namespaces !== undefined) {
            Object.assign(fields, namespaces(
              body.default_namespace ?? cur.default_namespace,
              body.allowed_namespaces ?? cur.allowed_namespaces,
              masterAllowed,
            ));
          }
          return fields;
        }),

      revoke: ({ principal, params }, ctx) => revoke(ctx, params.id, tenant(principal)),

      // Admin (/admin/keys).
      adminGet: async ({ params }, ctx) => {
        const k = await getKey(ctx.db, params.id);
        if (!k) throw notFound('key', { id: params.id });
        return keyView(k);
      },

      adminAccess: ({ params, body }, ctx) =>
        changeKey(ctx, params.id, undefined, (cur, masterAllowed) =>
          namespaces(body.default_namespace ?? cur.default_namespace, body.allowed_namespaces ?? cur.allowed_namespaces, masterAllowed),
        ),

      adminBudget: ({ params, body }, ctx) =>
        changeKey(ctx, params.id, undefined, (cur) => budgetUpdate(body, cur, ctx.now())),

    }),

    /** The database side of key authentication (when the store metadata is missing or incomplete). */
    authenticate: async ({ tokenHash }: { tokenHash: string }, ctx) => {
      const k = await keyByHash(ctx.db, tokenHash);
      if (!k) return null;
      const m = await getMaster(ctx.db, k.master_id);
      const usable = keyUsable(
        {
          status: k.status,
          revoked: k.revoked,
          expiresAt: k.expires_at ? Math.floor(Date.parse(k.expires_at) / 1000) : 0,
          issuedAtEpoch: k.issued_at_epoch,
          masterStatus: m?.status ?? 'deleted',
          masterEpoch: m?.epoch ?? -1,
        },
        ctx.now(),
      );
      return usable ? keyIdentity(k) : null;
    },
  },
});
