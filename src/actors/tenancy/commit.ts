/**
 * One change of the tenancy domain, through the common unit of work
 * (../outbox/change.ts), announced as `masters` or `keys`. The answer waits
 * until the change is in the shared store (whichever node's relay delivers
 * it) and this node's identity cache has dropped what it touched.
 */
import type { CommonQueryMethods } from 'slonik';
import type { BaseContext } from '../runtime/actor.js';
import type { StoreOp } from '../../storage/redis/store.js';
import { commitChange } from '../outbox/change.js';

export interface Change<T> {
  result: T;
  ops: StoreOp[];
  /** Ids announced on the config channel. */
  ids?: number[];
}

export function commit<T>(ctx: BaseContext, kind: 'masters' | 'keys', work: (tx: CommonQueryMethods) => Promise<Change<T>>): Promise<T> {
  return commitChange(
    ctx,
    async (tx, out) => {
      const c = await work(tx);
      out.change(kind, c.ops, c.ids);
      return c.result;
    },
    // In force on this node before the answer: the store holds the change, and no identity cached here predates it.
    { deliver: 'settle', inForce: (ops) => ctx.ask('identity', 'storeWritten', { ops }) },
  );
}
