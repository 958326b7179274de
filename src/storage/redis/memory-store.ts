/**
 * The shared store in process memory, for single-node setups and tests. It
 * mirrors Redis: typed keys (WRONGTYPE errors), empty hashes and sets vanish,
 * HINCRBY on a missing field starts at 0, and publish delivers to subscribers
 * asynchronously. apply() is all-or-nothing (stricter than Redis MULTI): ops
 * write in place, logging what they overwrite, and a failing op replays that
 * log backwards, instead of copying every key a batch touches up front (the
 * stats flush's cost: docs/performance.md).
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

interface Collections {
  hash: Map<string, string>;
  set: Set<string>;
}

const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

/**
 * What one apply() changed in place, in order, so that a failing op can undo
 * the batch: replaying the log backwards restores every touched key, field and
 * member. A key replaced, deleted or created in the batch is logged once, with
 * the entry it held before; the entry that replaces it is new to the batch, so
 * its fields and members need no log of their own. A field or member of an
 * entry older than the batch is logged at each change rather than tracked for
 * a first touch: the backward replay ends on its first value all the same, and
 * a batch rarely changes one twice.
 */
class UndoLog {
  private readonly log: Array<() => void> = [];
  /** Keys logged whole (created, replaced or deleted by this batch): absent until the first. */
  private replaced: Set<string> | undefined;

  constructor(private readonly data: Map<string, Entry>) {}

  /** true while the key still holds the entry it held before the batch (its fields and members need logging). */
  logsIn(key: string): boolean {
    return this.replaced === undefined || !this.replaced.has(key);
  }

  /** Puts `entry` under `key` (undefined deletes it), logging the entry it held on the key's first replacement. */
  replace(key: string, entry: Entry | undefined): void {
    const data = this.data;
    if (this.logsIn(key)) {
      (this.replaced ??= new Set()).add(key);
      const before = data.get(key);
      // Fields changed in place before this point were logged against `before` itself, so they come back too.
      this.log.push(before ? () => data.set(key, before) : () => data.delete(key));
    }
    if (entry) data.set(key, entry);
    else data.delete(key);
  }

  /** Logs a hash field's current value (or absence) before it changes. */
  field(hash: Map<string, string>, field: string): void {
    const before = hash.get(field);
    this.log.push(before === undefined ? () => hash.delete(field) : () => hash.set(field, before));
  }

  /** Logs a set member's presence before it changes. */
  member(set: Set<string>, member: string): void {
    this.log.push(set.has(member) ? () => set.add(member) : () => set.delete(member));
  }

  rollBack(): void {
    for (let i = this.log.length - 1; i >= 0; i--) this.log[i]!();
    this.log.length = 0;
  }
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
    const checked = checkOps(ops);
    const undo = new UndoLog(this.data);
    const published: Array<{ channel: string; message: string }> = [];
    try {
      for (const op of checked) this.run(op, undo, published);
    } catch (err) {
      undo.rollBack();
      throw err;
    }
    if (published.length > 0) setImmediate(() => this.deliver(published));
  }

  /** One op, written in place; whatever it changes is logged first so that a later failure can undo it. */
  private run(op: StoreOp, undo: UndoLog, published: Array<{ channel: string; message: string }>): void {
    const data = this.data;
    switch (op.op) {
      case 'set': undo.replace(op.key, { type: 'string', value: op.value }); break;
      case 'del': if (data.has(op.key)) undo.replace(op.key, undefined); break;
      case 'hset': {
        const h = this.writable(op.key, 'hash', undo);
        for (const field in op.fields) {
          if (undo.logsIn(op.key)) undo.field(h, field);
          h.set(field, op.fields[field]!);
        }
        break;
      }
      case 'hdel': this.removeAll(op.key, 'hash', op.fields, undo); break;
      case 'hincrby': {
        const h = this.writable(op.key, 'hash', undo);
        const current = h.get(op.field) ?? '0';
        if (!/^-?\d+$/.test(current)) throw new Error('ERR hash value is not an integer');
        const next = Number(current) + op.by;
        if (!Number.isSafeInteger(next)) throw new Error('ERR increment or decrement would overflow');
        if (undo.logsIn(op.key)) undo.field(h, op.field);
        h.set(op.field, String(next));
        break;
      }
      case 'sadd': {
        const s = this.writable(op.key, 'set', undo);
        for (const member of op.members) {
          if (s.has(member)) continue;
          if (undo.logsIn(op.key)) undo.member(s, member);
          s.add(member);
        }
        break;
      }
      case 'srem': this.removeAll(op.key, 'set', op.members, undo); break;
      case 'publish': published.push({ channel: op.channel, message: op.message }); break;
    }
  }

  /** HDEL and SREM: removes what is there, logging each removal; like Redis, a hash or set left empty is deleted. */
  private removeAll(key: string, type: 'hash' | 'set', items: readonly string[], undo: UndoLog): void {
    const collection = this.existing(key, type);
    if (!collection) return;
    const logging = undo.logsIn(key);
    for (const item of items) {
      if (!collection.has(item)) continue;
      if (logging) {
        if (collection instanceof Map) undo.field(collection, item);
        else undo.member(collection, item);
      }
      collection.delete(item);
    }
    if (collection.size === 0) undo.replace(key, undefined);
  }

  /** The hash or set a write goes to, or undefined when the key is missing (WRONGTYPE when it holds another type). */
  private existing<T extends 'hash' | 'set'>(key: string, type: T): Collections[T] | undefined {
    const entry = this.data.get(key);
    if (entry && entry.type !== type) throw new Error(WRONGTYPE);
    return entry?.value as Collections[T] | undefined;
  }

  /** Like existing(), creating the key (logged as a replacement) when it is missing. */
  private writable<T extends 'hash' | 'set'>(key: string, type: T, undo: UndoLog): Collections[T] {
    const found = this.existing(key, type);
    if (found) return found;
    const entry = (type === 'hash' ? { type, value: new Map() } : { type, value: new Set() }) as Entry;
    undo.replace(key, entry);
    return entry.value as Collections[T];
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
