/**
 * The unit of work of every configuration change: the rows and the outbox
 * entries that mirror them in the shared store commit in one Postgres
 * transaction, then the relay is asked to deliver at once. A domain writes
 * its rows and says what the store must hold (the writers of
 * src/storage/redis/writers); the transaction, the entries and the delivery
 * are here, once.
 */
import type { CommonQueryMethods } from 'slonik';
import type { BaseContext } from '../runtime/actor.js';
import type { StoreOp } from '../../storage/redis/store.js';
import type { ChangeKind } from '../../storage/redis/layout.js';
import { changeEntries, enqueueEntries } from '../../storage/postgres/outbox.js';

/** What a change queues for the shared store, in the order the relay delivers it. */
export interface Outbox {
  /** One entry: its operations apply atomically (one MULTI/EXEC); end it with its announcement. */
  entry(ops: StoreOp[]): void;
  /** Writes announced as `kind`, in entries of at most 500 (`changeEntries`); nothing when `ops` is empty. */
  change(kind: ChangeKind, ops: StoreOp[], ids?: Array<number | string>, options?: { idsPerOp?: boolean }): void;
}

export interface Delivery {
  /**
   * `kick` (the default): ask the relay to deliver now. `settle`: and wait until the entries are in the store,
   * whichever node's relay writes them, for at most 5 s. `later`: leave them to the next delivery (a full
   * snapshot's parts, delivered when it ends).
   */
  deliver?: 'kick' | 'settle' | 'later';
  /** Run once the change is delivered (only when it queued anything): what makes it in force on this node. */
  inForce?: (ops: StoreOp[]) => Promise<unknown>;
}

/** Runs `work` and queues its store writes in one transaction, then delivers them as `delivery` says; its result. */
export async function commitChange<T>(
  ctx: BaseContext,
  work: (tx: CommonQueryMethods, out: Outbox) => Promise<T>,
  delivery: Delivery = {},
): Promise<T> {
  const { result, ids, ops } = await ctx.db.transaction(async (tx) => {
    // Made per attempt: a retried transaction queues only what its last run asked for.
    const entries: StoreOp[][] = [];
    const out: Outbox = {
      entry: (ops) => {
        if (ops.length > 0) entries.push(ops);
      },
      change: (kind, ops, ids, options) => {
        entries.push(...changeEntries(kind, ctx.now(), ops, ids, options?.idsPerOp));
      },
    };
    const result = await work(tx, out);
    return { result, ids: await enqueueEntries(tx, entries), ops: entries.flat() };
  });
  if (ids.length === 0) return result;
  const { deliver = 'kick', inForce } = delivery;
  if (deliver === 'settle') await ctx.ask('outbox', 'settle', { ids }).catch(() => undefined);
  else if (deliver === 'kick') await ctx.ask('outbox', 'kick').catch(() => undefined);
  if (inForce) await inForce(ops);
  return result;
}
