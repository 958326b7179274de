/**
 * ClickHouse over HTTP (@clickhouse/client), with the same semantics as the
 * chDB transport: server-side {name:Type} binding, JSONEachRow, 64-bit
 * integers as JSON numbers, raw NDJSON inserts (objects, or arrays over a
 * column list).
 */
import { Readable } from 'node:stream';
import { createClient, parseError, type ClickHouseClient } from '@clickhouse/client';
import { dedupSettings, insertTarget, INSERT_SETTINGS, type ClickHouse, type InsertOptions, type QueryParams, type StreamFormat } from './client.js';
import { rethrowAs } from '../outage.js';

/** A server that cannot be reached rejects with the `clickhouse` 503; its own errors (data, syntax) pass unchanged. */
const clickhouseDown = rethrowAs('clickhouse');

export interface HttpClickHouseOptions {
  url: string;
  /** Database for unqualified names; else the one in the URL path or `default`. */
  database?: string;
  /** How long a read or an insert may leave its socket silent (30 s). */
  requestTimeoutMs?: number;
  /**
   * The same for a command (COMMAND_TIMEOUT_MS): DDL, a migration's backfill,
   * a DELETE that waits for its mutation, OPTIMIZE, a rollup rebuild. The server
   * sends nothing until such a statement ends, which at hundreds of millions of
   * rows takes minutes (a master's deletion at 200M logs: 200 s).
   */
  commandTimeoutMs?: number;
}

/** Ten minutes (SVC_CLICKHOUSE_COMMAND_TIMEOUT_MS): the longest maintenance statement measured (docs/clickhouse-compat.md, "Timeouts") with room to spare. */
export const COMMAND_TIMEOUT_MS = 600_000;

export class HttpClickHouse implements ClickHouse {
  readonly transport = 'http' as const;
  readonly #client: ClickHouseClient;
  /** Commands on their own pool, with their own timeout: a socket's timeout is set per client. */
  readonly #commands: ClickHouseClient;
  #closed = false;

  constructor(opts: HttpClickHouseOptions) {
    const client = (timeout: number) =>
      createClient({
        url: opts.url,
        ...(opts.database ? { database: opts.database } : {}),
        request_timeout: timeout,
        clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      });
    this.#client = client(opts.requestTimeoutMs ?? 30_000);
    this.#commands = client(opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS);
  }

  async command(sql: string, params: QueryParams = {}): Promise<void> {
    this.#open();
    await this.#commands.command({ query: sql, query_params: params }).catch(clickhouseDown);
  }

  async query<T = Record<string, unknown>>(sql: string, params: QueryParams = {}): Promise<T[]> {
    this.#open();
    try {
      const rs = await this.#client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
      return await rs.json<T>();
    } catch (err) {
      return clickhouseDown(err);
    }
  }

  /**
   * The response body as it arrives: the socket is read only as fast as the
   * caller takes blocks. Resolves once the server answered 200 (a bad query
   * rejects). An error the server meets later is written into the body
   * (ClickHouse 25.11+: a block tagged with X-ClickHouse-Exception-Tag): it is
   * kept out of the bytes given and thrown instead, as the chDB transport does.
   */
  async stream(sql: string, params: QueryParams = {}, format: StreamFormat = 'CSVWithNames'): Promise<AsyncIterableIterator<Uint8Array>> {
    this.#open();
    const res = await this.#client.exec({ query: `${sql}\nFORMAT ${format}`, query_params: params });
    const body = res.stream;
    const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    const tag = res.response_headers['x-clickhouse-exception-tag'];
    const next = typeof tag === 'string' && tag !== '' ? exceptionWatch(chunks, tag) : () => chunks.next();
    // return() before the first next() would not reach the stream: destroy it here, so the socket is freed either way.
    const it: AsyncIterableIterator<Uint8Array> = {
      next,
      return: async () => {
        body.destroy();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }

  async insert(table: string, rows: Buffer | string, options?: InsertOptions): Promise<void> {
    this.#open();
    const { format, columns } = insertTarget(table, options);
    if (rows.length === 0) return;
    // client.insert() wants JSON rows as objects; exec() sends our bytes untouched.
    const res = await this.#client.exec({
      query: `INSERT INTO ${table}${columns ? ` (${columns.map((c) => `\`${c}\``).join(', ')})` : ''} FORMAT ${format}`,
      values: Readable.from([typeof rows === 'string' ? Buffer.from(rows) : rows], { objectMode: false }),
      clickhouse_settings: { ...INSERT_SETTINGS, ...dedupSettings(options) },
    });
    // The socket goes back to the pool only once the (empty) response is read.
    for await (const _ of res.stream) void _;
  }

  async ping(): Promise<boolean> {
    if (this.#closed) return false;
    try {
      return (await this.#client.ping()).success;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([this.#client.close(), this.#commands.close()]);
  }

  #open(): void {
    if (this.#closed) throw new Error('ClickHouse (http) is closed');
  }
}

/**
 * Blocks of a body that may end with ClickHouse's exception block
 * (`\r\n__exception__\r\n<tag>\n<message>\n<length> <tag>\r\n__exception__\r\n`, as @clickhouse/client reads it):
 * the bytes before it are given, then the error is thrown. The last bytes of
 * each block are held back until the next one shows they do not start it.
 */
function exceptionWatch(chunks: AsyncIterator<Buffer>, tag: string): () => Promise<IteratorResult<Uint8Array>> {
  const start = Buffer.from(`\r\n__exception__\r\n${tag}`);
  let held: Buffer = Buffer.alloc(0);
  return async () => {
    for (;;) {
      const r = await chunks.next();
      if (!r.done) held = held.length ? Buffer.concat([held, r.value]) : r.value;
      const at = held.indexOf(start);
      if (at >= 0) {
        if (at > 0) {
          const data = held.subarray(0, at);
          held = held.subarray(at);
          return { done: false, value: data };
        }
        if (r.done || held.includes(`${tag}\r\n__exception__\r\n`, start.length)) {
          const text = held.subarray(start.length).toString().replace(/^\r?\n/, '');
          throw parseError(text.slice(0, text.lastIndexOf('\n', text.lastIndexOf(` ${tag}\r\n`))));
        }
        continue;
      }
      if (r.done) {
        if (held.length === 0) return { done: true, value: undefined };
        const data = held;
        held = Buffer.alloc(0);
        return { done: false, value: data };
      }
      const keep = Math.min(held.length, start.length - 1);
      if (held.length > keep) {
        const data = held.subarray(0, held.length - keep);
        held = held.subarray(held.length - keep);
        return { done: false, value: data };
      }
    }
  };
}
