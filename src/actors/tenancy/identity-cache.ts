/**
 * Child-key identities as last read from the shared store, and master-key
 * identities as last read from Postgres, on the HTTP thread, so that a token
 * presented again is answered without store or database reads and an actor
 * round trip. It stays exact because a key's entry holds the state the key is
 * judged by (checked again on every read, so expiry needs no event) and every
 * entry is dropped whenever the store may have changed under it (a master's
 * name, group, epoch, status and key digest change only with its
 * `tenancy:master:` hash, and the answer to such a change waits for this
 * node's drop even when the store is down):
 * - this node's writes: the outbox relay (the store's only writer) reports each
 *   batch of operations, and the entries of the tokens and masters they touch
 *   are dropped as the write starts and again when it ends;
 * - other nodes' writes: a tenancy change announced on the config channel
 *   empties the cache, except a `quota` change naming its keys (every stats
 *   flush and quota reset), which drops only those keys;
 * - anything unannounced (a missed message, a hand edit): entries live at most
 *   SVC_IDENTITY_CACHE_MS.
 * A read that raced a change is not kept: every drop advances a generation, and
 * a fill is refused when the generation moved since its read began.
 */
import type { StoreOp } from '../../storage/redis/store.js';
import { keyUsable, type KeyState } from './metadata.js';
import type { KeyIdentity, MasterView } from './views.js';

interface Entry {
  identity: KeyIdentity;
  state: KeyState;
  filledAt: number;
}

/** What a master key resolves to; only fields that change with the master's store hash. */
export interface MasterIdentity {
  id: number;
  name: string;
  group: string;
  epoch: number;
  status: string;
}

/** The masters actor's answer to a master key: the identity the cache keeps, and the view whoami shows. */
export interface MasterLookup {
  identity: MasterIdentity;
  view: MasterView;
}

interface MasterEntry {
  identity: MasterIdentity;
  filledAt: number;
}

/** Config-channel kinds that change token metadata or master state. */
const tenancyKinds = new Set(['masters', 'keys', 'quota']);
/** The kind whose `ids` name every key it changed (docs/store-layout.md): only those are dropped. */
const quotaKind = 'quota';
const tokenPrefix = 'tenancy:token:';
const masterPrefix = 'tenancy:master:';

/** Plain counters for /metrics (the hot path only adds to them). */
export interface IdentityCacheStats {
  hits: number;
  misses: number;
  masterHits: number;
  masterMisses: number;
  /** Announcements that emptied the cache. */
  cleared: number;
  /** Announcements that dropped only the keys they named. */
  narrowed: number;
}

export class IdentityCache {
  private readonly entries = new Map<string, Entry>();
  /** Key id -> token hash of every entry, for announcements that name keys by id. */
  private readonly byKeyId = new Map<number, string>();
  /** Master-key token hash -> identity. */
  private readonly masters = new Map<string, MasterEntry>();
  private generationValue = 0;
  readonly stats: IdentityCacheStats = { hits: 0, misses: 0, masterHits: 0, masterMisses: 0, cleared: 0, narrowed: 0 };

  constructor(
    /** How long an entry may be served without an announced change; 0 disables the cache. */
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  get masterSize(): number {
    return this.masters.size;
  }

  /** Taken before a store read; hand it back to fill(). */
  get generation(): number {
    return this.generationValue;
  }

  /**
   * The cached answer for a token: its identity, null when the key is no longer
   * usable (expired since it was read, for instance), undefined when not cached.
   */
  lookup(tokenHash: string, now: number): KeyIdentity | null | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) {
      this.stats.misses++;
      return undefined;
    }
    if (!this.fresh(entry.filledAt, now)) {
      this.drop(tokenHash);
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    return keyUsable(entry.state, now) ? entry.identity : null;
  }

  /** Keeps what a store read found, unless a change may have landed since the read began. */
  fill(tokenHash: string, identity: KeyIdentity, state: KeyState, generation: number, now: number): void {
    if (!this.keeps(generation)) return;
    if (this.full(this.entries, tokenHash)) this.drop(this.entries.keys().next().value as string); // the oldest fill
    this.entries.set(tokenHash, { identity, state, filledAt: now });
    this.byKeyId.set(identity.id, tokenHash);
  }

  /** The cached identity of a master key, undefined when not cached (or too old). */
  lookupMaster(tokenHash: string, now: number): MasterIdentity | undefined {
    const entry = this.masters.get(tokenHash);
    if (entry && this.fresh(entry.filledAt, now)) {
      this.stats.masterHits++;
      return entry.identity;
    }
    if (entry) this.masters.delete(tokenHash);
    this.stats.masterMisses++;
    return undefined;
  }

  /** Keeps what a database read found, unless a change may have landed since the read began. */
  fillMaster(tokenHash: string, identity: MasterIdentity, generation: number, now: number): void {
    if (!this.keeps(generation)) return;
    if (this.full(this.masters, tokenHash)) this.masters.delete(this.masters.keys().next().value as string);
    this.masters.set(tokenHash, { identity, filledAt: now });
  }

  /** Served only while younger than the age limit (and not from a clock that went back). */
  private fresh(filledAt: number, now: number): boolean {
    return now - filledAt < this.ttlMs && now >= filledAt;
  }

  /** A fill is kept only with the cache on and no drop since its read began. */
  private keeps(generation: number): boolean {
    return this.enabled && generation === this.generationValue;
  }

  /** A new entry would pass the bound: the oldest fill makes room. */
  private full(map: Map<string, unknown>, tokenHash: string): boolean {
    return map.size >= this.maxEntries && !map.has(tokenHash);
  }

  private drop(tokenHash: string): void {
    const entry = this.entries.get(tokenHash);
    if (!entry) return;
    this.entries.delete(tokenHash);
    if (this.byKeyId.get(entry.identity.id) === tokenHash) this.byKeyId.delete(entry.identity.id);
  }

  /** Drops the entries a batch of store operations touches (call before and after applying it). */
  storeWritten(ops: readonly StoreOp[]): void {
    let masters: Set<number> | undefined;
    let touched = false;
    for (const op of ops) {
      if (!('key' in op)) continue;
      if (op.key.startsWith(tokenPrefix)) {
        this.drop(op.key.slice(tokenPrefix.length));
        touched = true;
      } else if (op.key.startsWith(masterPrefix)) {
        (masters ??= new Set()).add(Number(op.key.slice(masterPrefix.length)));
        touched = true;
      }
    }
    if (masters) {
      for (const [hash, e] of this.entries) if (masters.has(e.identity.master_id)) this.drop(hash);
      for (const [hash, e] of this.masters) if (masters.has(e.identity.id)) this.masters.delete(hash);
    }
    if (touched) this.generationValue++;
  }

  /**
   * A message of the config channel. A tenancy change from any node empties the
   * cache, but a quota change names the keys it wrote (by id), and only those
   * are dropped (it changes no master's identity): the data plane's stats
   * flushes must not cost every whoami its cache. Anything unreadable is taken
   * for the worst.
   */
  announced(message: string): void {
    let change: { kind?: unknown; ids?: unknown } | undefined;
    try {
      change = JSON.parse(message) as { kind?: unknown; ids?: unknown };
    } catch {
      change = undefined;
    }
    const kind = change?.kind;
    if (typeof kind === 'string' && !tenancyKinds.has(kind)) return;
    const ids = change?.ids;
    if (kind === quotaKind && Array.isArray(ids) && ids.every(Number.isSafeInteger)) {
      for (const id of ids as number[]) {
        const hash = this.byKeyId.get(id);
        if (hash !== undefined) this.drop(hash);
      }
      this.generationValue++;
      this.stats.narrowed++;
      return;
    }
    this.clear();
    this.stats.cleared++;
  }

  clear(): void {
    this.entries.clear();
    this.byKeyId.clear();
    this.masters.clear();
    this.generationValue++;
  }
}
