/**
 * The shared store on Redis (ioredis).
 *
 * Failure behaviour is the point of most options here: while Redis is down
 * every command must fail fast (the Postgres outbox retries failed writes
 * later), never wait in a queue, and never be replayed behind the caller's
 * back once the connection comes back.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { checkOps } from './memory-store.js';
import type { SharedStore, StoreOp } from './store.js';
import { rethrowAs } from '../outage.js';

/** A command that failed for want of a connection rejects with the `redis` 503 (src/storage/outage.ts). */
const redisDown = rethrowAs('redis');

const CONNECT_TIMEOUT_MS = 1_500;
const COMMAND_TIMEOUT_MS = 1_500;
const SOCKET_TIMEOUT_MS = 3_000;
const PING_TIMEOUT_MS = 1_000;
const MAX_RECONNECT_DELAY_MS = 2_000;
const SCAN_COUNT = 500;

export interface RedisStoreOptions {
  /** `redis://[user:pass@]host:port[/db]`. */
  url: string;
  /** Connection errors (refused, reset, ...), reported on every reconnect attempt. */
  onError?: (err: Error) => void;
}

const connectionOptions: RedisOptions = {
  lazyConnect: true,
  // Commands issued while disconnected reject at once instead of queueing.
  enableOfflineQueue: false,
  // Commands in flight when the connection drops reject on that drop...
  maxRetriesPerRequest: 0,
  // ...and are never re-sent after reconnect (a MULTI might then apply twice).
  autoResendUnfulfilledCommands: false,
  // A server that accepts but never answers must not hang callers either.
  connectTimeout: CONNECT_TIMEOUT_MS,
  commandTimeout: COMMAND_TIMEOUT_MS,
  // A socket that stops answering pending commands is dropped and reconnected, not kept half-open.
  socketTimeout: SOCKET_TIMEOUT_MS,
  retryStrategy: (attempt) => Math.min(100 * 2 ** (attempt - 1), MAX_RECONNECT_DELAY_MS),
  // The subscriber resubscribes itself on `ready` (see ensureSubscriber).
  autoResubscribe: false,
  // Reads issued in the same tick share one write to the socket: whoami under load is many small reads.
  enableAutoPipelining: true,
};

/** Resolves with `fallback` if `promise` has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(resolve, ms, fallback);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class RedisStore implements SharedStore {
  readonly kind = 'redis' as const;
  private readonly redis: Redis;
  private subscriber: Redis | undefined;
  private subscriberReady: Promise<void> | undefined;
  private readonly listeners = new Map<string, Set<(message: string) => void>>();
  private closed = false;

  private constructor(private readonly opts: RedisStoreOptions) {
    this.redis = this.connection();
  }

  private readonly reportError = (err: unknown): void => {
    this.opts.onError?.(err instanceof Error ? err : new Error(String(err)));
  };

  /**
   * Makes one connection attempt (bounded by the connect timeout) and returns
   * the store whatever its outcome: with Redis down the service still starts,
   * reports the store as down, and reconnects in the background.
   */
  static async open(opts: RedisStoreOptions): Promise<RedisStore> {
    const store = new RedisStore(opts);
    await store.firstConnect(store.redis);
    return store;
  }

  private connection(): Redis {
    const redis = new Redis(this.opts.url, connectionOptions);
    // Without a listener ioredis prints every failed reconnect to the console.
    redis.on('error', this.reportError);
    return redis;
  }

  private async firstConnect(redis: Redis): Promise<void> {
    await within(redis.connect().catch(() => undefined), CONNECT_TIMEOUT_MS + 500, undefined);
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(key).catch(redisDown);
  }

  async hget(key: string, field: string): Promise<string | null> {
    return this.redis.hget(key, field).catch(redisDown);
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    return this.redis.hgetall(key).catch(redisDown);
  }

  async smembers(key: string): Promise<string[]> {
    return this.redis.smembers(key).catch(redisDown);
  }

  async scan(pattern: string): Promise<string[]> {
    // SCAN may return a key more than once; a set removes the repeats.
    const keys = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT).catch(redisDown);
      for (const key of batch) keys.add(key);
      cursor = next;
    } while (cursor !== '0');
    return [...keys];
  }

  /**
   * MULTI/EXEC in op order. Redis does not roll back a transaction whose
   * command fails at run time (e.g. WRONGTYPE: SADD on a string key); the
   * other commands stay applied and this rejects with the first error.
   */
  async apply(ops: StoreOp[]): Promise<void> {
    const checked = checkOps(ops);
    if (checked.length === 0) return;
    const multi = this.redis.multi();
    for (const op of checked) {
      switch (op.op) {
        case 'set': multi.set(op.key, op.value); break;
        case 'del': multi.del(op.key); break;
        case 'hset': multi.hset(op.key, op.fields); break;
        case 'hdel': multi.hdel(op.key, ...op.fields); break;
        case 'hincrby': multi.hincrby(op.key, op.field, op.by); break;
        case 'sadd': multi.sadd(op.key, ...op.members); break;
        case 'srem': multi.srem(op.key, ...op.members); break;
        case 'publish': multi.publish(op.channel, op.message); break;
      }
    }
    const results = await multi.exec().catch(redisDown);
    if (results === null) throw new Error('redis transaction aborted');
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('store is closed');
    const sub = await this.ensureSubscriber();
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    // Wrapped so that subscribing the same function twice gives two independent subscriptions.
    const listener = (message: string) => onMessage(message);
    set.add(listener);
    // While Redis is down this is skipped; the `ready` handler subscribes on reconnect.
    if (sub.status === 'ready') await sub.subscribe(channel).catch(this.reportError);
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      set.delete(listener);
      if (set.size > 0 || this.listeners.get(channel) !== set) return;
      this.listeners.delete(channel);
      if (sub.status === 'ready') await sub.unsubscribe(channel).catch(this.reportError);
    };
  }

  /** The subscriber connection, opened on first use (subscriber mode allows no other commands). */
  private ensureSubscriber(): Promise<Redis> {
    if (!this.subscriber) {
      const sub = this.connection();
      sub.on('message', (channel: string, message: string) => {
        for (const listener of this.listeners.get(channel) ?? []) {
          try {
            listener(message);
          } catch (err) {
            this.reportError(err);
          }
        }
      });
      // Our own resubscription (autoResubscribe only knows channels confirmed before the drop).
      sub.on('ready', () => {
        const channels = [...this.listeners.keys()];
        if (channels.length > 0) sub.subscribe(...channels).catch(this.reportError);
      });
      this.subscriber = sub;
      this.subscriberReady = this.firstConnect(sub);
    }
    const sub = this.subscriber;
    return this.subscriberReady!.then(() => sub);
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    const pong = this.redis.ping().then((reply) => reply === 'PONG', () => false);
    return within(pong, PING_TIMEOUT_MS, false);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await Promise.all([this.redis, this.subscriber].map((conn) => (conn ? quit(conn) : undefined)));
  }
}

/** QUIT when connected (flushes pending replies), then disconnect, which also stops reconnecting. */
async function quit(conn: Redis): Promise<void> {
  if (conn.status === 'ready') await within(conn.quit().catch(() => undefined), COMMAND_TIMEOUT_MS, undefined);
  conn.disconnect();
}
