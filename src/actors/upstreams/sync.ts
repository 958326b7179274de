/**
 * Keeps the routing tables of the shared store in step with the database.
 * Every change re-writes the groups and bindingKeys it touches, in the same
 * transaction, through the outbox, under one fresh routing version.
 */
import type { CommonQueryMethods } from 'slonik';
import type { BaseContext } from '../runtime/actor.js';
import type { StoreOp } from '../../storage/redis/store.js';
import { routingChange } from '../../storage/redis/layout.js';
import {
  bindingGone,
  bindingWritten,
  groupGone,
  groupWritten,
  routingListsCleared,
  routingVersionOp,
  staleRoutingKeys,
} from '../../storage/redis/writers/routing.js';
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
import { commitChange, type Outbox } from '../outbox/change.js';
import { buildBindingSnapshot } from './binding-snapshot.js';

/** What a change touched; bindingKeys of the touched groups, models and namespaces are found here. */
export interface Affected {
  groupIds?: number[];
  bindingKeys?: string[];
  models?: string[];
  namespaces?: string[];
}

const unique = <T>(xs: T[]): T[] => [...new Set(xs)];

async function groupOps(tx: CommonQueryMethods, ids: number[], version: number, nowMs: number): Promise<StoreOp[]> {
  if (ids.length === 0) return [];
  const groups = await groupsByIds(tx, ids);
  const live = groups.filter((g) => !g.deleted && g.status === 'active');
  const keys = await usableKeys(tx, live.map((g) => g.id), nowMs);
  return groups.flatMap((g) => (live.includes(g) ? groupWritten(g, keys.filter((k) => k.group_id === g.id), version) : groupGone(g.id)));
}

async function bindingOps(tx: CommonQueryMethods, bindingKeys: string[], version: number, nowMs: number): Promise<StoreOp[]> {
  if (bindingKeys.length === 0) return [];
  const rows = await bindingsByKeys(tx, bindingKeys);
  const groupIds = unique(rows.map((b) => b.group_id));
  const groups = new Map<number, GroupState>((await groupsByIds(tx, groupIds)).map((g) => [g.id, g]));
  const keys = await usableKeys(tx, groupIds, nowMs);
  const models = new Map((await modelsByNames(tx, unique(rows.map((b) => b.selector_value)))).map((m) => [m.name, m]));
  return bindingKeys.flatMap((bindingKey) => {
    const mine = rows.filter((b) => b.binding_key === bindingKey);
    return mine.length === 0 ? bindingGone(bindingKey) : bindingWritten(buildBindingSnapshot(bindingKey, mine, groups, keys, models, version, nowMs));
  });
}

/** Queues the re-write of what `affected` touches as one entry; returns the routing version it carries. */
export async function syncRouting(tx: CommonQueryMethods, out: Outbox, affected: Affected, nowMs: number): Promise<number> {
  const version = await nextRoutingVersion(tx);
  const groupIds = unique(affected.groupIds ?? []);
  const bindingKeys = unique([...(affected.bindingKeys ?? []), ...(await affectedBindingKeys(tx, affected))]).sort();
  out.entry([
    ...(await groupOps(tx, groupIds, version, nowMs)),
    ...(await bindingOps(tx, bindingKeys, version, nowMs)),
    routingVersionOp(version),
    routingChange('routing', nowMs, version, bindingKeys, groupIds),
  ]);
  return version;
}

/**
 * Queues the whole routing state as one entry and deletes the routing keys in
 * `present` (read from the store by the caller) that the state no longer has.
 */
export async function snapshotRouting(tx: CommonQueryMethods, out: Outbox, present: string[], nowMs: number) {
  const version = await nextRoutingVersion(tx);
  const groupIds = await allGroupIds(tx);
  const bindingKeys = (await allBindingKeys(tx)).sort();
  const ops = [...(await groupOps(tx, groupIds, version, nowMs)), ...(await bindingOps(tx, bindingKeys, version, nowMs))];
  const stale = staleRoutingKeys(present, ops);
  out.entry([
    ...routingListsCleared(),
    ...ops,
    ...stale.ops,
    routingVersionOp(version),
    routingChange('routing_snapshot', nowMs, version, bindingKeys, groupIds),
  ]);
  return { version, groups: groupIds.length, binding_keys: bindingKeys.length, removed: stale.keys.length, removed_binding_keys: stale.bindingKeys, removed_groups: stale.groupIds };
}

/**
 * Runs a database change and the routing sync it calls for in one unit of
 * work (no entry when it touched nothing), delivered at once.
 */
export function routedChange<T>(
  ctx: BaseContext,
  work: (tx: CommonQueryMethods) => Promise<{ result: T; affected: Affected }>,
): Promise<T> {
  return commitChange(ctx, async (tx, out) => {
    const { result, affected } = await work(tx);
    if (Object.values(affected).some((v) => v && v.length > 0)) await syncRouting(tx, out, affected, ctx.now());
    return result;
  });
}
