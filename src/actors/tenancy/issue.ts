/** Issuing a child key: one rule set for the admin path and the tenant path. */
import type { CommonQueryMethods } from 'slonik';
import { conflict, forbidden, notFound } from '../../errors.js';
import { getMaster, insertKey } from '../../storage/postgres/tenancy.js';
import type { BaseContext } from '../runtime/actor.js';
import { newBudget } from './budget.js';
import type { KeyInput } from './handles.js';
import { commit } from './commit.js';
import { tokenMetaOp } from '../../storage/redis/writers/tenancy.js';
import { periodStart } from './quota.js';
import { newSecret } from './tokens.js';
import { expiry, ipList, nameList, namespaces } from './validate.js';
import { keyView } from './views.js';

export function issueKey(ctx: BaseContext, masterId: number, body: KeyInput, issuedBy: 'master' | 'admin') {
  return commit(ctx, 'keys', async (tx: CommonQueryMethods) => {
    const master = await getMaster(tx, masterId, true);
    if (!master) throw notFound('master');
    if (master.status !== 'active') throw forbidden('the master is not active', { master_id: master.id, status: master.status });
    const group = body.group ?? master.group;
    if (group !== master.group) throw forbidden('invalid group for this master', { group: `must be ${master.group}` });
    if (master.child_keys >= master.max_child_keys) {
      throw conflict('the master has reached its child key cap', { max_child_keys: master.max_child_keys });
    }
    const now = ctx.now();
    const ns = namespaces(
      body.default_namespace ?? master.default_namespace,
      body.allowed_namespaces ?? master.allowed_namespaces,
      master.allowed_namespaces,
    );
    const resetType = body.quota_reset_type ?? 'never';
    const secret = newSecret('sk');
    const row = await insertKey(tx, {
      masterId: master.id,
      name: body.name ?? '',
      tokenHash: secret.hash,
      keyPrefix: secret.prefix,
      issuedBy,
      issuedAtEpoch: master.epoch,
      group,
      scopes: body.scopes ?? '',
      quotaLimit: body.quota_limit ?? -1,
      quotaResetType: resetType,
      quotaPeriodStart: periodStart(resetType, now),
      modelLimitsEnabled: body.model_limits_enabled ?? false,
      modelLimits: nameList(body.model_limits ?? ''),
      allowIps: ipList('allow_ips', body.allow_ips ?? ''),
      denyIps: ipList('deny_ips', body.deny_ips ?? ''),
      defaultNamespace: ns.default_namespace,
      allowedNamespaces: ns.allowed_namespaces,
      status: body.status ?? 'active',
      expiresAt: expiry(body.expires_at, now),
      budget: newBudget(body, now),
    });
    return { result: { ...keyView(row), key_secret: secret.secret }, ops: [tokenMetaOp(row)], ids: [row.id] };
  });
}
