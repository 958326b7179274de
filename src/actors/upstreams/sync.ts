/**
 * Keeps the routing tables of the shared store in step with the database.
 * Every change re-writes the groups and bindingKeys it touches, in the same
 * transaction, through the outbox, under one fresh routing version.
 */
import type { CommonQueryMethods } from 'slonik';
import type { BaseContext } from '../runtime/actor.js';
import type { StoreOp } from '../../storage/redis/store.js';
import { enqueueOps } from '../../storage/postgres/outbox.js';
import { routingChange, routingKeys } from '../../storage/redis/layout.js';
import {
  affectedBindingKeys,
  allBindingKeys,
  allGroupIds,
  bindingsByKeys,
  groupsByIds,
  modelsByNames,
  nextRoutingVersion,
  usableKeys,
  type GroupState,
} from '../../storage/postgres/routing.js';
import { buildBindingSnapshot } from './binding-snapshot.js';

/** What a change touched; bindingKeys of the touched groups, models and namespaces are found here. */
export interface Affected {
  groupIds?: number[];
  bindingKeys?: string[];
  models?: string[];
  namespaces?: string[];
}

const unique = <T>(xs: T[]): T[] => [...new Set(xs)];
const str = (v: string | null | undefined): string => v ?? '';

async function groupOps(tx: CommonQueryMethods, ids: number[], version: number, nowMs: number): Promise<StoreOp[]> {
  if (ids.length === 0) return [];
  const groups = await groupsByIds(tx, ids);
  const live = groups.filter((g) => !g.deleted && g.status === 'active');
  const keys = await usableKeys(tx, live.map((g) => g.id), nowMs);
  const ops: StoreOp[] = [];
  for (const g of groups) {
    ops.push({ op: 'del', key: routingKeys.group(g.id) }, { op: 'del', key: routingKeys.groupKeys(g.id) });
    if (!live.includes(g)) {
      ops.push({ op: 'srem', key: routingKeys.groups, members: [String(g.id)] });
      continue;
    }
    ops.push(
      {
        op: 'hset',
        key: routingKeys.group(g.id),
        fields: {
          id: String(g.id),
          name: g.name,
          type: g.type,
          base_url: g.base_url,
          models: JSON.stringify(g.models),
          cloud_project: str(g.cloud_project),
          cloud_location: str(g.cloud_location),
          static_headers: JSON.stringify(g.static_headers),
          headers_profile: g.headers_profile,
          version: String(version),
        },
      },
      {
        op: 'hset',
        key: routingKeys.groupKeys(g.id),
        fields: Object.fromEntries(
          keys
            .filter((k) => k.group_id === g.id)
            .map((k) => [
              String(k.id),
              JSON.stringify({
                id: k.id,
                weight: k.weight,
                api_key: k.api_key,
                access_token: str(k.access_token),
                expires_at: k.expires_at ?? 0,
                account_id: str(k.account_id),
                project_id: str(k.project_id),
                ban_until: k.ban_until ?? 0,
              }),
            ]),
        ),
      },
      { op: 'sadd', key: routingKeys.groups, members: [String(g.id)] },
    );
  }
  return ops;
}

async function bindingOps(tx: CommonQueryMethods, bindingKeys: string[], version: number, nowMs: number): Promise<StoreOp[]> {
  if (bindingKeys.length === 0) return [];
  const rows = await bindingsByKeys(tx, bindingKeys);
  const groupIds = unique(rows.map((b) => b.group_id));
  const groups = new Map<number, GroupState>((await groupsByIds(tx, groupIds)).map((g) => [g.id, g]));
  const keys = await usableKeys(tx, groupIds, nowMs);
  const models = new Map((await modelsByNames(tx, unique(rows.map((b) => b.selector_value)))).map((m) => [m.name, m]));
  const ops: StoreOp[] = [];
  for (const bindingKey of bindingKeys) {
    const mine = rows.filter((b) => b.binding_key === bindingKey);
    if (mine.length === 0) {
      ops.push({ op: 'del', key: routingKeys.binding(bindingKey) }, { op: 'srem', key: routingKeys.bindings, members: [bindingKey] });
      continue;
    }
    const snapshot = buildBindingSnapshot(bindingKey, mine, groups, keys, models, version, nowMs);
    ops.push(
      { op: 'set', key: routingKeys.binding(bindingKey), value: JSON.stringify(snapshot) },
      { op: 'sadd', key: routingKeys.bindings, members: [bindingKey] },
    );
  }
  return ops;
}

/** Re-writes what `affected` touches; returns the routing version it carries. */
export async function syncRouting(tx: CommonQueryMethods, affected: Affected, nowMs: number): Promise<number> {
  const version = await nextRoutingVersion(tx);
  const groupIds = unique(affected.groupIds ?? []);
  const bindingKeys = unique([...(affected.bindingKeys ?? []), ...(await affectedBindingKeys(tx, affected))]).sort();
  await enqueueOps(tx, [
    ...(await groupOps(tx, groupIds, version, nowMs)),
    ...(await bindingOps(tx, bindingKeys, version, nowMs)),
    { op: 'set', key: routingKeys.version, value: String(version) },
    routingChange('routing', nowMs, version, bindingKeys, groupIds),
  ]);
  return version;
}

/**
 * Writes the whole routing state and deletes the routing keys in `present`
 * (read from the store by the caller) that the state no longer has.
 */
export async function snapshotRouting(tx: CommonQueryMethods, present: string[], nowMs: number) {
  const version = await nextRoutingVersion(tx);
  const groupIds = await allGroupIds(tx);
  const bindingKeys = (await allBindingKeys(tx)).sort();
  const ops = [...(await groupOps(tx, groupIds, version, nowMs)), ...(await bindingOps(tx, bindingKeys, version, nowMs))];
  const written = new Set(ops.filter((o) => o.op === 'set' || o.op === 'hset').map((o) => (o as { key: string }).key));
  // A group that is not usable is written as a del: its keys are not stale either way.
  const stale = present.filter((k) => !written.has(k));
  const staleBindings = stale.filter((k) => k.startsWith(routingKeys.binding(''))).map((k) => k.slice(routingKeys.binding('').length));
  const staleGroups = stale.filter((k) => /^route:group:\d+$/.test(k)).map((k) => k.slice('route:group:'.length));
  await enqueueOps(tx, [
    { op: 'del', key: routingKeys.groups },
    { op: 'del', key: routingKeys.bindings },
    ...ops,
    ...stale.map((key): StoreOp => ({ op: 'del', key })),
    { op: 'set', key: routingKeys.version, value: String(version) },
    routingChange('routing_snapshot', nowMs, version, bindingKeys, groupIds),
  ]);
  return { version, groups: groupIds.length, binding_keys: bindingKeys.length, removed: stale.length, removed_binding_keys: staleBindings, removed_groups: staleGroups.map(Number) };
}

/**
 * Runs a database change and the routing sync it calls for in one
 * transaction (none when it touched nothing), then asks the relay to deliver at once.
 */
export async function routedChange<T>(
  ctx: BaseContext,
  work: (tx: CommonQueryMethods) => Promise<{ result: T; affected: Affected }>,
): Promise<T> {
  let wrote = false;
  const result = await ctx.db.transaction(async (tx) => {
    const { result, affected } = await work(tx);
    wrote = Object.values(affected).some((v) => v && v.length > 0);
    if (wrote) await syncRouting(tx, affected, ctx.now());
    return result;
  });
  if (wrote) await ctx.ask('outbox', 'kick').catch(() => undefined);
  return result;
}
