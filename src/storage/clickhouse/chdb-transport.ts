/**
 * ClickHouse over embedded chDB. The engine is a process singleton bound to one
 * data directory, and it crashes when driven from a worker thread, so this is
 * main-thread only and one instance per process.
 */
import { isMainThread } from 'node:worker_threads';
import { Session } from 'chdb';
import { assertTableName, INSERT_SETTINGS, type ClickHouse, type QueryParams } from './client.js';

/** The engine binds one data directory per process; one instance of this class owns it. */
let openPath: string | null = null;

export class ChdbClickHouse implements ClickHouse {
  readonly transport = 'chdb' as const;
  #session: Session;
  #closed = false;
  /** Calls still running natively: close() waits for them rather than pulling the connection away. */
  readonly #inflight = new Set<Promise<unknown>>();

  constructor(dataPath: string) {
    if (!isMainThread) throw new Error('chDB must only be used on the main thread');
    if (openPath !== null) throw new Error(`chDB is already open in this process (${openPath}); share that instance`);
    this.#session = new Session(dataPath, {
      connectionArgs: [
        // A connection argument rather than a SETTINGS clause, so it covers every query.
        '--output_format_json_quote_64bit_integers=0',
        // chDB defaults this to 2, which starves mutations: a DELETE then waits
        // seconds (about 150 ms per part); the server default of 16 makes it ~100 ms.
        '--background_pool_size=16',
      ],
    });
    openPath = dataPath;
  }

  async command(sql: string, params: QueryParams = {}): Promise<void> {
    await this.#run(() => this.#session.queryBindAsync(sql, bindable(params), { format: 'TSV' }));
  }

  async query<T = Record<string, unknown>>(sql: string, params: QueryParams = {}): Promise<T[]> {
    const res = await this.#run(() => this.#session.queryBindAsync(sql, bindable(params), { format: 'JSONEachRow' }));
    const rows: T[] = [];
    for (const line of res.text().split('\n')) if (line) rows.push(JSON.parse(line) as T);
    return rows;
  }

  async insert(table: string, ndjson: Buffer | string): Promise<void> {
    assertTableName(table);
    if (ndjson.length === 0) return;
    await this.#run(() => this.#session.insert({ table, values: ndjson, format: 'JSONEachRow', settings: INSERT_SETTINGS }));
  }

  async ping(): Promise<boolean> {
    if (this.#closed) return false;
    try {
      await this.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inflight]);
    this.#session.close();
    openPath = null;
  }

  /**
   * chDB itself serialises bound queries process-wide (its parameter state is
   * not per connection), so concurrent calls are safe without a queue here.
   */
  #run<R>(start: () => Promise<R>): Promise<R> {
    if (this.#closed) return Promise.reject(new Error('ClickHouse (chdb) is closed'));
    const p = start();
    this.#inflight.add(p);
    const forget = () => this.#inflight.delete(p);
    p.then(forget, forget);
    return p;
  }
}

/** chDB renders a Date param without milliseconds; send an exact Unix timestamp instead. */
function bindable(params: QueryParams): QueryParams {
  const out: QueryParams = {};
  for (const [k, v] of Object.entries(params)) out[k] = v instanceof Date ? (v.getTime() / 1000).toFixed(3) : v;
  return out;
}
