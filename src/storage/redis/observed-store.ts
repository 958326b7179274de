/**
 * A shared store that reports its writes: the listener sees each batch of
 * operations as the write starts and again when it has ended (applied or not),
 * so a cache of store contents can drop what the batch touches and refuse
 * reads that raced it.
 */
import type { SharedStore, StoreOp } from './store.js';

export function observeWrites(store: SharedStore, onWrite: (ops: readonly StoreOp[]) => void): SharedStore {
  return {
    kind: store.kind,
    get: (key) => store.get(key),
    hget: (key, field) => store.hget(key, field),
    hgetall: (key) => store.hgetall(key),
    smembers: (key) => store.smembers(key),
    scan: (pattern) => store.scan(pattern),
    async apply(ops) {
      onWrite(ops);
      try {
        await store.apply(ops);
      } finally {
        onWrite(ops);
      }
    },
    subscribe: (channel, onMessage) => store.subscribe(channel, onMessage),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}
