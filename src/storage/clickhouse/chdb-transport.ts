/**
 * ClickHouse over embedded chDB. The engine is a process singleton bound to one
 * data directory, and it crashes when driven from a worker thread, so this is
 * main-thread only and one instance per process. It holds several connections
 * (sessions) to that one engine so that reads run in parallel: each call goes
 * to the connection with the fewest calls running, and parameters are rendered
 * as typed literals (literals.ts), because chDB runs bound queries one at a
 * time process-wide.
 */
import { isMainThread } from 'node:worker_threads';
import { Session } from 'chdb';
import { insertTarget, INSERT_SETTINGS, type ClickHouse, type InsertOptions, type QueryParams } from './client.js';
import { inlineParams } from './literals.js';

/** The engine binds one data directory per process; one instance of this class owns it. */
let openPath: string | null = null;

export class ChdbClickHouse implements ClickHouse {
  readonly transport = 'chdb' as const;
  readonly #sessions: Array<{ session: Session; running: number }>;
  #closed = false;
  /** Calls still running natively: close() waits for them rather than pulling the connection away. */
  readonly #inflight = new Set<Promise<unknown>>();

  constructor(dataPath: string, connections = 1) {
    if (!isMainThread) throw new Error('chDB must only be used on the main thread');
    if (openPath !== null) throw new Error(`chDB is already open in this process (${openPath}); share that instance`);
    const open = (): Session =>
      new Session(dataPath, {
        connectionArgs: [
          // A connection argument rather than a SETTINGS clause, so it covers every query.
          '--output_format_json_quote_64bit_integers=0',
          // chDB defaults this to 2, which starves mutations: a DELETE then waits
          // seconds (about 150 ms per part); the server default of 16 makes it ~100 ms.
          '--background_pool_size=16',
        ],
      });
    this.#sessions = Array.from({ length: Math.max(1, connections) }, () => ({ session: open(), running: 0 }));
    openPath = dataPath;
  }

  async command(sql: string, params: QueryParams = {}): Promise<void> {
    await this.#run((s) => s.queryAsync(bound(sql, params), { format: 'TSV' }));
  }

  async query<T = Record<string, unknown>>(sql: string, params: QueryParams = {}): Promise<T[]> {
    const res = await this.#run((s) => s.queryAsync(bound(sql, params), { format: 'JSONEachRow' }));
    const rows: T[] = [];
    for (const line of res.text().split('\n')) if (line) rows.push(JSON.parse(line) as T);
    return rows;
  }

  async insert(table: string, rows: Buffer | string, options?: InsertOptions): Promise<void> {
    const { format, columns } = insertTarget(table, options);
    if (rows.length === 0) return;
    await this.#run((s) => s.insert({ table, values: rows, format, ...(columns ? { columns } : {}), settings: INSERT_SETTINGS }));
  }

  /** `USE` is connection state in chDB (it sticks for later calls and inserts): set it on every connection. */
  async use(database: string): Promise<void> {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new Error(`invalid database name: ${database}`);
    await Promise.all(this.#sessions.map(({ session }) => session.queryAsync(`USE ${database}`, { format: 'TSV' })));
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
    for (const { session } of this.#sessions) session.close();
    openPath = null;
  }

  /** Starts a call on the least busy connection, tracked until it settles. */
  #run<R>(start: (session: Session) => Promise<R>): Promise<R> {
    if (this.#closed) return Promise.reject(new Error('ClickHouse (chdb) is closed'));
    let slot = this.#sessions[0]!;
    for (const s of this.#sessions) if (s.running < slot.running) slot = s;
    let p: Promise<R>;
    try {
      p = start(slot.session);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    slot.running++;
    this.#inflight.add(p);
    const forget = () => {
      slot.running--;
      this.#inflight.delete(p);
    };
    p.then(forget, forget);
    return p;
  }
}

/** The SQL to run: placeholders rendered as literals (only when there are parameters, so DDL text passes untouched). */
const bound = (sql: string, params: QueryParams): string => (Object.keys(params).length > 0 ? inlineParams(sql, params) : sql);
