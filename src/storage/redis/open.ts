/**
 * Picks the shared store: Redis when a URL is configured, process memory otherwise.
 */
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';
import type { SharedStore } from './store.js';

/**
 * Never rejects because Redis is down: the store comes back unconnected,
 * ping() reports false, and it reconnects in the background.
 */
export async function openStore(opts: {
  url?: string;
  /** Redis connection errors, reported on every failed (re)connect attempt. */
  onError?: (err: Error) => void;
}): Promise<SharedStore> {
  if (!opts.url) return new MemoryStore();
  return RedisStore.open({ url: opts.url, onError: opts.onError });
}
