/**
 * The shared store in process memory, for single-node setups and tests. It
 * mirrors Redis: typed keys (WRONGTYPE errors), empty hashes and sets vanish,
 * HINCRBY on a missing field starts at 0, and publish delivers to subscribers
 * asynchronously. apply() is all-or-nothing (stricter than Redis MULTI).
 */
import type { SharedStore, StoreOp } from './store.js';

type Entry =
  | { type: 'string'; value: string }
  | { type: 'hash'; value: Map<string, string> }
  | { type: 'set'; value: Set<string> };

/**
 * Shared by both stores so they refuse and skip the same ops. Bad ops are
 * rejected before anything is sent, so a malformed batch leaves no partial writes.
 */
export function checkOps(ops: StoreOp[]): StoreOp[] {
  for (const op of ops) {
    if (op.op === 'hincrby' && !Number.isSafeInteger(op.by)) {
      throw new Error(`hincrby ${op.key} ${op.field}: increment ${op.by} is not an integer`);
    }
  }
  // Redis rejects HSET/HDEL/SADD/SREM without arguments; treat them as no-ops instead.
  return ops.filter((op) => {
    if (op.op === 'hset') return Object.keys(op.fields).length > 0;
    if (op.op === 'hdel') return op.fields.length > 0;
    if (op.op === 'sadd' || op.op === 'srem') return op.members.length > 0;
    return true;
  });
}

const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

function clone(entry: Entry | undefined): Entry | undefined {
  if (entry?.type === 'hash') return { type: 'hash', value: new Map(entry.value) };
  if (entry?.type === 'set') return { type: 'set', value: new Set(entry.value) };
  return entry;
}

/** Redis glob (`*`, `?`, `[a-z]`, `[^x]`, `\` escapes) as an anchored RegExp. */
export function globToRegExp(pattern: string): RegExp {
  const escape = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else if (c === '\\' && i + 1 < pattern.length) re += escape(pattern[++i]);
    else if (c === '[' && pattern.indexOf(']', i + 1) > i + 1) {
      const end = pattern.indexOf(']', i + 1);
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('^');
      if (negate) body = body.slice(1);
      // Keep `a-z` ranges, escape everything else.
      const cls = body.replace(/(.)-(.)|(.)/gs, (_, from, to, one) =>
        one !== undefined ? escape(one) : `${escape(from)}-${escape(to)}`,
      );
      re += `[${negate ? '^' : ''}${cls}]`;
      i = end;
    } else re += escape(c);
  }
  return new RegExp(`^${re}$`, 's');
}

export class MemoryStore implements SharedStore {
  readonly kind = 'memory' as const;
  private readonly data = new Map<string, Entry>();
  private readonly listeners = new Map<string, Set<(message: string) => void>>();
  private closed = false;

  private read<T extends Entry['type']>(key: string, type: T): Extract<Entry, { type: T }> | undefined {
    this.assertOpen();
    const entry = this.data.get(key);
    if (entry && entry.type !== type) throw new Error(WRONGTYPE);
    return entry as Extract<Entry, { type: T }> | undefined;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('store is closed');
  }

  async get(key: string): Promise<string | null> {
    return this.read(key, 'string')?.value ?? null;
  }

  async hget(key: string, field: string): Promise<string | null> {
    return this.read(key, 'hash')?.value.get(field) ?? null;
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    return Object.fromEntries(this.read(key, 'hash')?.value ?? []);
  }

  async smembers(key: string): Promise<string[]> {
    return [...(this.read(key, 'set')?.value ?? [])];
  }

  async scan(pattern: string): Promise<string[]> {
    this.assertOpen();
    const re = globToRegExp(pattern);
    return [...this.data.keys()].filter((key) => re.test(key));
  }

  async apply(ops: StoreOp[]): Promise<void> {
    this.assertOpen();
    // Ops run against copies of the keys they touch; the copies replace the
    // originals only once every op succeeded.
    const staged = new Map<string, Entry | undefined>();
    const published: Array<{ channel: string; message: string }> = [];
    const load = (key: string) => (staged.has(key) ? staged.get(key) : clone(this.data.get(key)));
    const typed = <T extends Entry['type']>(key: string, type: T, create: () => Extract<Entry, { type: T }>) => {
      const entry = load(key) ?? create();
      if (entry.type !== type) throw new Error(WRONGTYPE);
      staged.set(key, entry);
      return entry as Extract<Entry, { type: T }>;
    };
    const hash = (key: string) => typed(key, 'hash', () => ({ type: 'hash', value: new Map() })).value;
    const set = (key: string) => typed(key, 'set', () => ({ type: 'set', value: new Set() })).value;
    // Like Redis, a hash or set left empty is deleted.
    const dropIfEmpty = (key: string, size: number) => size === 0 && staged.set(key, undefined);

    for (const op of checkOps(ops)) {
      switch (op.op) {
        case 'set': staged.set(op.key, { type: 'string', value: op.value }); break;
        case 'del': staged.set(op.key, undefined); break;
        case 'hset': {
          const h = hash(op.key);
          for (const [field, value] of Object.entries(op.fields)) h.set(field, value);
          break;
        }
        case 'hdel': {
          const h = hash(op.key);
          for (const field of op.fields) h.delete(field);
          dropIfEmpty(op.key, h.size);
          break;
        }
        case 'hincrby': {
          const h = hash(op.key);
          const current = h.get(op.field) ?? '0';
          if (!/^-?\d+$/.test(current)) throw new Error('ERR hash value is not an integer');
          const next = Number(current) + op.by;
          if (!Number.isSafeInteger(next)) throw new Error('ERR increment or decrement would overflow');
          h.set(op.field, String(next));
          break;
        }
        case 'sadd': {
          const s = set(op.key);
          for (const member of op.members) s.add(member);
          break;
        }
        case 'srem': {
          const s = set(op.key);
          for (const member of op.members) s.delete(member);
          dropIfEmpty(op.key, s.size);
          break;
        }
        case 'publish': published.push({ channel: op.channel, message: op.message }); break;
      }
    }
    for (const [key, entry] of staged) {
      if (entry) this.data.set(key, entry);
      else this.data.delete(key);
    }
    if (published.length > 0) setImmediate(() => this.deliver(published));
  }

  /** Delivers to whoever is subscribed at delivery time, as a Redis subscriber would see it. */
  private deliver(messages: Array<{ channel: string; message: string }>): void {
    for (const { channel, message } of messages) {
      for (const listener of [...(this.listeners.get(channel) ?? [])]) {
        try {
          listener(message);
        } catch {
          // One failing listener must not starve the others.
        }
      }
    }
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    this.assertOpen();
    let listeners = this.listeners.get(channel);
    if (!listeners) this.listeners.set(channel, (listeners = new Set()));
    // Wrapped so that subscribing the same function twice gives two independent subscriptions.
    const listener = (message: string) => onMessage(message);
    listeners.add(listener);
    return async () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.listeners.get(channel) === listeners) this.listeners.delete(channel);
    };
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
  }
}
