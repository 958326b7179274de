/**
 * The shared store: the narrow key-value contract the data plane reads.
 * Two implementations serve it: Redis (ioredis) when SVC_REDIS_URL is set, an
 * in-process map otherwise. Writes are expressed as plain-data operations so
 * that they can be queued in the Postgres outbox and replayed later.
 */
export type StoreOp =
  | { op: 'set'; key: string; value: string }
  | { op: 'del'; key: string }
  | { op: 'hset'; key: string; fields: Record<string, string> }
  | { op: 'hdel'; key: string; fields: string[] }
  | { op: 'hincrby'; key: string; field: string; by: number }
  | { op: 'sadd'; key: string; members: string[] }
  | { op: 'srem'; key: string; members: string[] }
  | { op: 'publish'; channel: string; message: string };

export interface SharedStore {
  /** `redis` or `memory`: shown by /health and /metrics. */
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  hget(key: string, field: string): Promise<string | null>;
  hgetall(key: string): Promise<Record<string, string>>;
  smembers(key: string): Promise<string[]>;
  /** Keys matching a glob pattern (SCAN, never KEYS). For snapshots and tests, not hot paths. */
  scan(pattern: string): Promise<string[]>;
  /** Applies the operations atomically and in order (MULTI/EXEC on Redis). */
  apply(ops: StoreOp[]): Promise<void>;
  /** Subscribes to a channel; returns a function that unsubscribes. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  /** true when the store answers a PING. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
