/**
 * ClickHouse over embedded chDB. The engine is a process singleton bound to one
 * data directory, and it crashes when driven from a worker thread, so this is
 * main-thread only and one instance per process. It holds several connections
 * (sessions) to that one engine so that reads run in parallel: each call runs
 * alone on a connection, and calls wait for the first one free in one queue,
 * oldest first (connection-pool.ts), and parameters are rendered
 * as typed literals (literals.ts), because chDB runs bound queries one at a
 * time process-wide. A streamed read holds a connection of its own for as long
 * as it is read (chDB drops a connection's stream when another query runs on
 * it): up to STREAM_CONNECTIONS of them, opened when first needed and kept.
 */
import { isMainThread } from 'node:worker_threads';
import { Session, type ChdbQueryStream, type StreamChunk } from 'chdb';
import { dedupSettings, insertTarget, INSERT_SETTINGS, type ClickHouse, type InsertOptions, type QueryParams, type StreamFormat } from './client.js';
import { ConnectionPool } from './connection-pool.js';
import { inlineParams } from './literals.js';

/** The engine binds one data directory per process; one instance of this class owns it. */
let openPath: string | null = null;

/** Streamed reads running at once; more wait for a connection to come free. */
const STREAM_CONNECTIONS = 4;

export class ChdbClickHouse implements ClickHouse {
  readonly transport = 'chdb' as const;
  /** Connections for calls, all opened at once. */
  readonly #calls: ConnectionPool<Session>;
  /** Connections for streamed reads, opened when first needed and kept. */
  readonly #streaming: ConnectionPool<Session>;
  #closed = false;
  /** Calls still running natively: close() waits for them rather than pulling the connection away. */
  readonly #inflight = new Set<Promise<unknown>>();
  #database: string | null = null;
  readonly #streams = new Set<ChdbQueryStream>();

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
    // A connection opened later joins the database the others use; one that cannot is closed, not leaked.
    const openInDatabase = async (): Promise<Session> => {
      const session = open();
      try {
        if (this.#database) await session.queryAsync(`USE ${this.#database}`, { format: 'TSV' });
      } catch (err) {
        session.close();
        throw err;
      }
      return session;
    };
    const size = Math.max(1, connections);
    this.#calls = new ConnectionPool(size, openInDatabase, Array.from({ length: size }, open));
    this.#streaming = new ConnectionPool(STREAM_CONNECTIONS, openInDatabase);
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

  async stream(sql: string, params: QueryParams = {}, format: StreamFormat = 'CSVWithNames'): Promise<AsyncIterableIterator<Uint8Array>> {
    if (this.#closed) throw new Error('ClickHouse (chdb) is closed');
    const session = await this.#streaming.take();
    let stream: ChdbQueryStream;
    let first: IteratorResult<StreamChunk>;
    let chunks: AsyncIterator<StreamChunk>;
    try {
      stream = session.queryStream(bound(sql, params), { format });
      this.#streams.add(stream);
      chunks = stream[Symbol.asyncIterator]();
      first = await chunks.next();
    } catch (err) {
      this.#releaseStream(session, undefined);
      throw err;
    }
    return this.#resumed(session, stream, chunks, first, format.endsWith('WithNames'));
  }

  /** The stream as byte blocks, the first already read; the connection goes back to the pool once it ends or is left. */
  #resumed(
    session: Session,
    stream: ChdbQueryStream,
    chunks: AsyncIterator<StreamChunk>,
    first: IteratorResult<StreamChunk>,
    withNames: boolean,
  ): AsyncIterableIterator<Uint8Array> {
    let pending: IteratorResult<StreamChunk> | null = first;
    let headerSent = false;
    let ended = false;
    let fetching: Promise<unknown> | null = null;
    const end = async (): Promise<IteratorResult<Uint8Array>> => {
      if (!ended) {
        ended = true;
        await fetching?.catch(() => undefined); // a fetch still running uses the connection
        this.#releaseStream(session, stream);
      }
      return { done: true, value: undefined };
    };
    const next = async (): Promise<IteratorResult<Uint8Array>> => {
      for (;;) {
        if (ended) return { done: true, value: undefined };
        let r = pending;
        pending = null;
        if (!r) {
          const f = chunks.next();
          fetching = f;
          try {
            r = await f;
          } catch (err) {
            fetching = null;
            await end();
            throw err;
          }
          fetching = null;
        }
        if (r.done) return end();
        let bytes = r.value.raw();
        // chDB formats every block on its own, so a *WithNames format repeats its header line in each: keep the first.
        if (withNames && headerSent) bytes = bytes.subarray(bytes.indexOf(0x0a) + 1);
        headerSent = true;
        if (bytes.length > 0) return { done: false, value: bytes };
      }
    };
    const it: AsyncIterableIterator<Uint8Array> = { next, return: end, [Symbol.asyncIterator]: () => it };
    return it;
  }

  #releaseStream(session: Session, stream: ChdbQueryStream | undefined): void {
    if (stream) {
      stream.cancel();
      this.#streams.delete(stream);
    }
    this.#streaming.give(session);
  }

  async insert(table: string, rows: Buffer | string, options?: InsertOptions): Promise<void> {
    const { format, columns } = insertTarget(table, options);
    if (rows.length === 0) return;
    await this.#run((s) => s.insert({ table, values: rows, format, ...(columns ? { columns } : {}), settings: { ...INSERT_SETTINGS, ...dedupSettings(options) } }));
  }

  /** `USE` is connection state in chDB (it sticks for later calls and inserts): set it on every connection. */
  async use(database: string): Promise<void> {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new Error(`invalid database name: ${database}`);
    const all = [...this.#calls.all, ...this.#streaming.all];
    await Promise.all(all.map((session) => session.queryAsync(`USE ${database}`, { format: 'TSV' })));
    this.#database = database;
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
    for (const stream of this.#streams) stream.cancel();
    await Promise.allSettled([...this.#inflight]);
    for (const session of [...this.#calls.all, ...this.#streaming.all]) session.close();
    openPath = null;
  }

  /** Runs a call on the first connection free (at once if one is idle), tracked until it settles. */
  #run<R>(start: (session: Session) => Promise<R>): Promise<R> {
    if (this.#closed) return Promise.reject(new Error('ClickHouse (chdb) is closed'));
    const p = (async () => {
      const session = await this.#calls.take();
      try {
        return await start(session);
      } finally {
        this.#calls.give(session);
      }
    })();
    this.#inflight.add(p);
    const forget = () => this.#inflight.delete(p);
    p.then(forget, forget);
    return p;
  }
}

/** The SQL to run: placeholders rendered as literals (only when there are parameters, so DDL text passes untouched). */
const bound = (sql: string, params: QueryParams): string => (Object.keys(params).length > 0 ? inlineParams(sql, params) : sql);
