/**
 * One transaction of the tenancy domain: the database change and the store
 * operations that mirror it are committed together through the outbox; the
 * answer waits until the change is in the shared store (whichever node's relay
 * delivers it) and this node's identity cache has dropped what it touched.
 */
import type { CommonQueryMethods } from 'slonik';
import type { BaseContext } from '../runtime/actor.js';
import type { StoreOp } from '../../storage/redis/store.js';
import { enqueueEntries } from '../../storage/postgres/outbox.js';
import { configChange } from '../../storage/redis/layout.js';

export interface Change<T> {
  result: T;
  ops: StoreOp[];
  /** Ids announced on the config channel. */
  ids?: number[];
}

/** Outbox entries stay small enough for one MULTI each. */
const CHUNK = 500;

/**
 * Queues a change's store operations, announced on the config channel by the
 * last entry with `ids` (left out past 1,000: subscribers then assume anything
 * changed). With `idsPerOp`, ops[i] is the write of ids[i] and every entry
 * announces the ids of its own ops, so a change of any size names everything
 * it wrote (a quota change: the keys whose quota_used it set).
 */
export async function enqueueChange(
  tx: CommonQueryMethods,
  kind: string,
  at: number,
  ops: StoreOp[],
  ids?: Array<number | string>,
  idsPerOp = false,
): Promise<number[]> {
  if (ops.length === 0) return [];
  const entries: StoreOp[][] = [];
  for (let i = 0; i < ops.length; i += CHUNK) {
    const chunk = ops.slice(i, i + CHUNK);
    if (idsPerOp) chunk.push(configChange(kind, at, ids!.slice(i, i + CHUNK)));
    else if (i + CHUNK >= ops.length) chunk.push(configChange(kind, at, ids && ids.length <= 1000 ? ids : undefined));
    entries.push(chunk);
  }
  return enqueueEntries(tx, entries);
}

export async function commit<T>(
  ctx: BaseContext,
  kind: 'masters' | 'keys',
  work: (tx: CommonQueryMethods) => Promise<Change<T>>,
): Promise<T> {
  const { change, entries } = await ctx.db.transaction(async (tx) => {
    const c = await work(tx);
    return { change: c, entries: await enqueueChange(tx, kind, ctx.now(), c.ops, c.ids) };
  });
  if (entries.length > 0) {
    // In force on this node before the answer: the store holds the change, and no identity cached here predates it.
    await ctx.ask('outbox', 'settle', { ids: entries }).catch(() => undefined);
    await ctx.ask('identity', 'storeWritten', { ops: change.ops });
  }
  return change.result;
}
