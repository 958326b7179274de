/**
 * The statistics cache: answers of ClickHouse reads kept by their exact SQL
 * and parameters, valid while the log data generation of their scope
 * (src/actors/logs/generations.ts) has not moved. Ranges are exact to the
 * second, so the key is too: a read repeated with the same range (or a named
 * period within the same second) sends the same SQL; and identical reads in
 * flight at once share one query. An answer is therefore the one a fresh read would give, as of the
 * read that filled it, while no log insert, deletion or retention pass has
 * touched its scope since. Entries also expire after `maxAgeMs`, which bounds
 * what a writer that bypasses this service (or a lost generation update) can
 * leave stale.
 */
import type { ClickHouseReader, QueryParams } from '../../storage/clickhouse/client.js';
import type { LogGenerations } from '../logs/generations.js';

export interface ReadCacheOptions {
  /** Answers kept (least recently used go first); 0 turns the cache off. */
  maxEntries: number;
  maxAgeMs: number;
  now: () => number;
  /** Told of every read: served from the cache (or a shared read in flight) or not. */
  onRead?: (hit: boolean) => void;
}

interface Entry {
  generation: string;
  at: number;
  rows: Promise<unknown[]>;
}

/** JSON that also carries bigint parameters (the key only has to be unique). */
const keyOf = (sql: string, params: QueryParams): string =>
  `${sql}\n${JSON.stringify(params, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`;

export class StatsReadCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly clickhouse: ClickHouseReader,
    private readonly generations: LogGenerations,
    private readonly opts: ReadCacheOptions,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /**
   * A reader for statistics of one master (or of everything when
   * `masterId` is undefined): its answers are cached under that scope's
   * current generation. Without the generation (the store is down) reads go
   * straight to ClickHouse.
   */
  async reader(masterId?: number): Promise<ClickHouseReader> {
    if (this.opts.maxEntries === 0) return this.clickhouse;
    let generation: string;
    try {
      // Read before the query runs: a change landing during the query leaves the answer under the older generation.
      generation = await this.generations.of(masterId);
    } catch {
      return this.clickhouse;
    }
    return { query: <T>(sql: string, params: QueryParams = {}) => this.#read(generation, sql, params) as Promise<T[]> };
  }

  #read(generation: string, sql: string, params: QueryParams): Promise<unknown[]> {
    const key = keyOf(sql, params);
    const now = this.opts.now();
    const found = this.#entries.get(key);
    this.#entries.delete(key); // re-inserted below: Map order is the recency order
    if (found && found.generation === generation && now - found.at <= this.opts.maxAgeMs) {
      this.#entries.set(key, found);
      this.opts.onRead?.(true);
      return found.rows;
    }
    this.opts.onRead?.(false);
    const entry: Entry = { generation, at: now, rows: this.clickhouse.query(sql, params) };
    this.#entries.set(key, entry);
    entry.rows.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    while (this.#entries.size > this.opts.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    return entry.rows;
  }
}
