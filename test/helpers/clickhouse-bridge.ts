/**
 * ClickHouse's HTTP interface served from the embedded engine (chDB), so that
 * the service's HTTP transport (@clickhouse/client, SVC_CLICKHOUSE_URL) runs
 * the same test files as the embedded transport. It answers what the client
 * sends the way a server does: the query in the URL or the body (or a
 * multipart form), `param_*` values bound by the engine itself (the same text
 * parsing a server applies), `database`, `default_format` or a FORMAT clause,
 * settings as URL parameters, `query_id`, gzip/deflate/br bodies both ways,
 * the X-ClickHouse-* response headers, errors as `Code: N. DB::Exception: …`
 * with the status a server gives that code, and SELECTs streamed block by
 * block with backpressure (a failure after the first block ends the body with
 * the exception block of ClickHouse 25.11+).
 *
 * chDB must stay on a main thread and binds one data directory per process,
 * so the bridge runs in a child process (spawnClickHouseBridge) and a test
 * process never loads chDB for it. docs/clickhouse-compat.md says what this
 * proves and what it does not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';
import { createBrotliCompress, createBrotliDecompress, createDeflate, createGzip, createGunzip, createInflate } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Readable, type Transform } from 'node:stream';

/** The native calls of chDB used here: its JS layer re-escapes bound values, a server binds the text it received. */
interface Native {
  QueryAsyncConnection(conn: unknown, sql: string, format: string, params?: Record<string, string>): Promise<RawResult>;
  StreamQuery(conn: unknown, sql: string, format: string, params?: Record<string, string>): unknown;
  StreamFetch(handle: unknown): Promise<{ bytes: Buffer; numRows: number; done: boolean }>;
  StreamCancel(handle: unknown): void;
}
interface RawResult {
  bytes: Buffer;
  rowsRead: number;
  bytesRead: number;
  elapsed: number;
}
interface ChdbSession {
  connection: unknown;
  close(): void;
  insert(p: { table: string; values: Buffer; format: string; columns?: string[]; settings?: Record<string, string> }): Promise<{
    rowsWritten: number;
    bytesWritten: number;
  }>;
}

/** URL parameters that are not settings (HTTP interface options, ClickHouse docs "HTTP Interface"). */
const NOT_SETTINGS = new Set([
  'query',
  'database',
  'default_format',
  'query_id',
  'session_id',
  'session_timeout',
  'session_check',
  'compress',
  'decompress',
  'user',
  'password',
  'quota_key',
  'role',
  'buffer_size',
  'wait_end_of_query',
  'enable_http_compression',
  'http_zlib_compression_level',
  'http_native_compression_disable_checksumming_on_decompress',
  'stacktrace',
]);

/** The HTTP status a ClickHouse server answers an exception with (its exceptionCodeToHTTPStatus), by the code's name. */
const STATUS_BY_NAME: ReadonlyArray<[number, readonly string[]]> = [
  [401, ['REQUIRED_PASSWORD']],
  [403, ['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE', 'ACCESS_DENIED']],
  [
    400,
    [
      'BAD_ARGUMENTS', 'CANNOT_COMPILE_REGEXP', 'CANNOT_PARSE_TEXT', 'CANNOT_PARSE_ESCAPE_SEQUENCE', 'CANNOT_PARSE_QUOTED_STRING',
      'CANNOT_PARSE_DATE', 'CANNOT_PARSE_DATETIME', 'CANNOT_PARSE_NUMBER', 'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING', 'CANNOT_PARSE_IPV4',
      'CANNOT_PARSE_IPV6', 'CANNOT_PARSE_INPUT_ASSERTION_FAILED', 'CANNOT_PARSE_UUID', 'DUPLICATE_COLUMN', 'ILLEGAL_COLUMN',
      'UNKNOWN_ELEMENT_IN_AST', 'UNKNOWN_TYPE_OF_AST_NODE', 'THERE_IS_NO_COLUMN', 'TOO_DEEP_AST', 'TOO_BIG_AST',
      'UNEXPECTED_AST_STRUCTURE', 'SYNTAX_ERROR', 'INCORRECT_DATA', 'TYPE_MISMATCH', 'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
    ],
  ],
  [
    404,
    [
      'UNKNOWN_TABLE', 'UNKNOWN_FUNCTION', 'UNKNOWN_IDENTIFIER', 'UNKNOWN_TYPE', 'UNKNOWN_STORAGE', 'UNKNOWN_DATABASE',
      'UNKNOWN_SETTING', 'UNKNOWN_DIRECTION_OF_SORTING', 'UNKNOWN_AGGREGATE_FUNCTION', 'UNKNOWN_FORMAT',
      'UNKNOWN_DATABASE_ENGINE', 'UNKNOWN_TYPE_OF_QUERY', 'UNKNOWN_ROLE',
    ],
  ],
  [413, ['QUERY_IS_TOO_LARGE']],
  [501, ['NOT_IMPLEMENTED']],
  [503, ['SOCKET_TIMEOUT', 'CANNOT_OPEN_FILE', 'CANNOT_SCHEDULE_TASK']],
  [411, ['HTTP_LENGTH_REQUIRED']],
  [408, ['TIMEOUT_EXCEEDED']],
  [415, ['UNSUPPORTED_MEDIA_TYPE']],
];
const statusOfName = new Map(STATUS_BY_NAME.flatMap(([status, names]) => names.map((n) => [n, status] as const)));

/** Output formats whose blocks can be sent as they come (row formats); the others are sent whole. */
const STREAMED_FORMATS = /^(CSV|TSV|TabSeparated|JSONEachRow|JSONCompactEachRow|JSONStringsEachRow|JSONCompactStringsEachRow|RowBinary|Raw|LineAsString)/i;
const WITH_NAMES = /WithNames(AndTypes)?$/i;

const CONTENT_TYPES: Array<[RegExp, string]> = [
  [/^(JSONEachRow|JSONCompactEachRow|JSONStringsEachRow|JSONCompactStringsEachRow|NDJSON|JSONLines)/i, 'application/x-ndjson; charset=UTF-8'],
  [/^JSON/i, 'application/json; charset=UTF-8'],
  [/^CSV/i, 'text/csv; charset=UTF-8; header=present'],
  [/^(TSV|TabSeparated)/i, 'text/tab-separated-values; charset=UTF-8'],
];
const contentType = (format: string): string => CONTENT_TYPES.find(([re]) => re.test(format))?.[1] ?? 'text/plain; charset=UTF-8';

/** A ClickHouse exception: its code, name and text, as the engine wrote it. */
class EngineError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly name_: string,
  ) {
    super(message);
  }
  static of(err: unknown): EngineError {
    if (err instanceof EngineError) return err;
    const message = err instanceof Error ? err.message : String(err);
    const code = /Code: (\d+)\./.exec(message);
    const name = /\(([A-Z][A-Z0-9_]{2,})\)\s*$/.exec(message);
    return new EngineError(
      code ? message : `Code: 1000. DB::Exception: ${message}. (POCO_EXCEPTION)`,
      code ? Number(code[1]) : 1000,
      name?.[1] ?? 'POCO_EXCEPTION',
    );
  }
}

/** One engine connection, used by one request at a time; remembers its database and the settings it was given. */
interface Slot {
  session: ChdbSession;
  database: string;
  settings: Map<string, string>;
}

interface Parsed {
  sql: string;
  /** The raw payload of an `INSERT … FORMAT f` whose data is the body. */
  insertData?: Buffer;
  params: Record<string, string>;
  settings: Map<string, string>;
  database: string;
  format: string;
  queryId: string;
  compressResponse: string | null;
}

export interface BridgeOptions {
  /** Engine connections; requests beyond wait for one (default 8). */
  connections?: number;
}

export interface ClickHouseBridge {
  /** `http://127.0.0.1:<port>`; append `/<database>` for a client's default database. */
  readonly url: string;
  /** Creates a database (IF NOT EXISTS) and returns the URL that selects it. */
  database(name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Serves the bridge from THIS process (it must be a main thread and must not
 * have chDB open on another directory). Tests use spawnClickHouseBridge.
 */
export async function serveClickHouseBridge(dataDir: string, opts: BridgeOptions = {}): Promise<ClickHouseBridge> {
  if (!isMainThread) throw new Error('the ClickHouse bridge runs chDB, which must stay on the main thread');
  const require = createRequire(import.meta.url);
  const chdbPath = require.resolve('chdb');
  const { Session } = require(chdbPath) as { Session: new (path: string) => ChdbSession };
  const native = (require(join(dirname(chdbPath), 'dist', 'loader.js')) as { loadNative(): Native }).loadNative();

  const max = Math.max(1, opts.connections ?? 8);
  const idle: Slot[] = [];
  const all: Slot[] = [];
  const waiters: Array<(s: Slot) => void> = [];
  const running = new Set<string>();
  /** chDB's bound parameters are process-wide state: bound queries start one at a time. */
  let paramChain: Promise<unknown> = Promise.resolve();
  const exclusive = <R>(start: () => Promise<R>): Promise<R> => {
    const p = paramChain.then(start);
    paramChain = p.catch(() => undefined);
    return p;
  };

  const acquire = (): Promise<Slot> => {
    const slot = idle.pop();
    if (slot) return Promise.resolve(slot);
    if (all.length < max) {
      const fresh: Slot = { session: new Session(dataDir), database: 'default', settings: new Map() };
      all.push(fresh);
      return Promise.resolve(fresh);
    }
    return new Promise((resolve) => waiters.push(resolve));
  };
  const release = (slot: Slot): void => {
    const w = waiters.shift();
    if (w) w(slot);
    else idle.push(slot);
  };
  const run = async (slot: Slot, sql: string, format = 'TSV', params?: Record<string, string>): Promise<RawResult> => {
    try {
      return params && Object.keys(params).length > 0
        ? await exclusive(() => native.QueryAsyncConnection(slot.session.connection, sql, format, params))
        : await native.QueryAsyncConnection(slot.session.connection, sql, format);
    } catch (err) {
      throw EngineError.of(err);
    }
  };

  /** The connection brought to the request's database and settings (others set back to their defaults). */
  const prepare = async (slot: Slot, req: Parsed): Promise<void> => {
    const changes: string[] = [];
    for (const name of slot.settings.keys()) if (!req.settings.has(name)) changes.push(`${name} = DEFAULT`);
    for (const [name, value] of req.settings) if (slot.settings.get(name) !== value) changes.push(`${name} = ${quote(value)}`);
    if (changes.length > 0) {
      slot.settings = new Map(); // unknown until the SET succeeds
      await run(slot, `SET ${changes.join(', ')}`);
      slot.settings = new Map(req.settings);
    }
    if (slot.database !== req.database) {
      await run(slot, `USE ${backquote(req.database)}`);
      slot.database = req.database;
    }
  };

  const timezone = await (async () => {
    const slot = await acquire();
    try {
      return (await run(slot, 'SELECT timezone()')).bytes.toString().trim();
    } finally {
      release(slot);
    }
  })();
  const version = await (async () => {
    const slot = await acquire();
    try {
      return (await run(slot, 'SELECT version()')).bytes.toString().trim();
    } finally {
      release(slot);
    }
  })();

  const fail = (res: ServerResponse, err: EngineError, queryId: string | null, body: NodeJS.WritableStream = res): void => {
    const text = `${err.message.replace(/\s+$/, '')} (version ${version} (official build))\n`;
    if (res.headersSent) {
      // ClickHouse 25.11+: an error after the first bytes ends the body with a tagged exception block.
      const tag = tags.get(res) ?? '';
      const message = `${text}`;
      body.end(`\r\n__exception__\r\n${tag}\n${message}${Buffer.byteLength(message)} ${tag}\r\n__exception__\r\n`);
      return;
    }
    res.writeHead(statusOfName.get(err.name_) ?? 500, {
      'Content-Type': 'text/plain; charset=UTF-8',
      'X-ClickHouse-Exception-Code': String(err.code),
      ...(queryId ? { 'X-ClickHouse-Query-Id': queryId } : {}),
      'X-ClickHouse-Timezone': timezone,
    });
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://bridge');
    if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' }).end('Ok.\n');
      return;
    }
    if (url.pathname !== '/' && !/^\/[A-Za-z0-9_]+\/?$/.test(url.pathname)) {
      fail(res, new EngineError(`Code: 1000. DB::Exception: Not found: ${url.pathname}. (POCO_EXCEPTION)`, 1000, 'POCO_EXCEPTION'), null);
      return;
    }
    let parsed: Parsed;
    try {
      parsed = await parse(req, url);
    } catch (err) {
      fail(res, EngineError.of(err), null);
      return;
    }
    const { queryId } = parsed;
    if (running.has(queryId)) {
      fail(res, new EngineError(`Code: 216. DB::Exception: Query with id = ${queryId} is already running. (QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING)`, 216, 'QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING'), queryId);
      return;
    }
    running.add(queryId);
    const slot = await acquire();
    try {
      await prepare(slot, parsed);
      await answer(slot, parsed, req, res);
    } catch (err) {
      fail(res, EngineError.of(err), queryId);
    } finally {
      running.delete(queryId);
      release(slot);
    }
  };

  /** Each answer's exception tag (headers given to writeHead are not readable back). */
  const tags = new WeakMap<ServerResponse, string>();
  const headersOf = (p: Parsed, summary: Record<string, number>, res: ServerResponse): Record<string, string> => ({
    'Content-Type': contentType(p.format),
    'X-ClickHouse-Query-Id': p.queryId,
    'X-ClickHouse-Format': p.format,
    'X-ClickHouse-Timezone': timezone,
    'X-ClickHouse-Server-Display-Name': 'clickhouse-bridge',
    'X-ClickHouse-Exception-Tag': tags.set(res, randomUUID().replace(/-/g, '').slice(0, 16)).get(res)!,
    'X-ClickHouse-Summary': JSON.stringify(
      Object.fromEntries(
        Object.entries({ read_rows: 0, read_bytes: 0, written_rows: 0, written_bytes: 0, total_rows_to_read: 0, result_rows: 0, result_bytes: 0, elapsed_ns: 0, ...summary }).map(
          ([k, v]) => [k, String(Math.round(v))],
        ),
      ),
    ),
    ...(p.compressResponse ? { 'Content-Encoding': p.compressResponse } : {}),
  });

  /** Writes a body, compressed when the client asked for it. */
  const bodyWriter = (p: Parsed, res: ServerResponse): { out: NodeJS.WritableStream; done: Promise<void> } => {
    if (!p.compressResponse) return { out: res, done: Promise.resolve() };
    const z: Transform = p.compressResponse === 'gzip' ? createGzip() : p.compressResponse === 'deflate' ? createDeflate() : createBrotliCompress();
    const done = pipeline(z, res).catch(() => undefined);
    return { out: z, done };
  };

  const answer = async (slot: Slot, p: Parsed, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (p.insertData !== undefined) {
      const target = /^\s*INSERT\s+INTO\s+([A-Za-z0-9_.`]+)\s*(?:\(([^)]*)\))?\s*(?:SETTINGS\s+.*?)?\s*FORMAT\s+(\w+)\s*$/is.exec(p.sql)!;
      const table = target[1]!.replace(/`/g, '');
      const columns = target[2]?.split(',').map((c) => c.trim().replace(/^`|`$/g, ''));
      const started = process.hrtime.bigint();
      let summary;
      try {
        summary = await slot.session.insert({ table, values: p.insertData, format: target[3]!, ...(columns ? { columns } : {}) });
      } catch (err) {
        throw EngineError.of(err);
      }
      res.writeHead(200, headersOf(p, { written_rows: summary.rowsWritten, written_bytes: summary.bytesWritten, elapsed_ns: Number(process.hrtime.bigint() - started) }, res));
      res.end();
      return;
    }
    const isRead = /^\s*(\(\s*)*(SELECT|WITH)\b/i.test(p.sql);
    if (!isRead || !STREAMED_FORMATS.test(p.format)) {
      const r = await run(slot, p.sql, p.format, p.params);
      res.writeHead(200, headersOf(p, { read_rows: r.rowsRead, read_bytes: r.bytesRead, result_rows: isRead ? r.rowsRead : 0, result_bytes: r.bytes.length, elapsed_ns: r.elapsed * 1e9 }, res));
      const { out, done } = bodyWriter(p, res);
      out.end(r.bytes);
      await done;
      return;
    }
    await stream(slot, p, req, res);
  };

  /** A SELECT sent block by block: the next block is fetched once the socket took the previous one. */
  const stream = async (slot: Slot, p: Parsed, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const conn = slot.session.connection;
    const hasParams = Object.keys(p.params).length > 0;
    let handle: unknown;
    let first: { bytes: Buffer; done: boolean };
    try {
      const start = async () => {
        handle = hasParams ? native.StreamQuery(conn, p.sql, p.format, p.params) : native.StreamQuery(conn, p.sql, p.format);
        return native.StreamFetch(handle);
      };
      first = hasParams ? await exclusive(start) : await start();
    } catch (err) {
      if (handle !== undefined) native.StreamCancel(handle);
      throw EngineError.of(err);
    }
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    req.on('close', () => undefined);
    res.writeHead(200, headersOf(p, {}, res));
    const { out, done } = bodyWriter(p, res);
    const withNames = WITH_NAMES.test(p.format);
    let headerSent = false;
    let block: { bytes: Buffer; done: boolean } = first;
    try {
      while (!block.done && !closed) {
        let bytes = block.bytes;
        // chDB formats each block on its own, so a *WithNames header repeats per block; a server writes it once.
        if (withNames && headerSent) {
          const lines = /AndTypes$/i.test(p.format) ? 2 : 1;
          let at = 0;
          for (let i = 0; i < lines; i++) at = bytes.indexOf(0x0a, at) + 1;
          bytes = bytes.subarray(at);
        }
        headerSent = true;
        if (bytes.length > 0 && !out.write(bytes)) {
          await new Promise<void>((resolve) => {
            const go = () => {
              out.removeListener('drain', go);
              res.removeListener('close', go);
              resolve();
            };
            out.once('drain', go);
            res.once('close', go);
          });
        }
        if (closed) break;
        block = await native.StreamFetch(handle);
      }
    } catch (err) {
      native.StreamCancel(handle);
      if (!closed) fail(res, EngineError.of(err), p.queryId, out);
      await done;
      return;
    }
    native.StreamCancel(handle);
    if (!closed) out.end();
    await done;
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) fail(res, EngineError.of(err), null);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 10_000; // a server's default keep_alive_timeout is 10 s (30 s from 25.x); the client's idle TTL is 2.5 s
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | null = null;
  return {
    url: base,
    database: async (name) => {
      await command(base, `CREATE DATABASE IF NOT EXISTS ${backquote(name)}`);
      return `${base}/${name}`;
    },
    close: () =>
      (closing ??= (async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await paramChain;
        // Requests still running finish first (closing a connection under a running query aborts the engine).
        for (const until = Date.now() + 5_000; all.length > idle.length && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
        for (const slot of all) slot.session.close();
      })()),
  };
}

/** The request as ClickHouse reads it: query text (URL then body), data, parameters, settings, format. */
async function parse(req: IncomingMessage, url: URL): Promise<Parsed> {
  const search = url.searchParams;
  let body = await readBody(req);
  let sql = search.get('query') ?? '';
  const params: Record<string, string> = {};
  const settings = new Map<string, string>();
  for (const [k, v] of search) {
    if (k.startsWith('param_')) params[k.slice(6)] = v;
    else if (!NOT_SETTINGS.has(k)) settings.set(k, v);
  }
  const type = req.headers['content-type'] ?? '';
  const multipart = req.method === 'POST' && type.startsWith('multipart/form-data');
  if (multipart) {
    // Parameters too long for the URL come as form fields (the client's use_multipart_params).
    const form = await new Response(body, { headers: { 'content-type': type } }).formData();
    for (const [k, v] of form) {
      if (typeof v !== 'string') continue;
      if (k === 'query') sql = sql ? `${sql}\n${v}` : v;
      else if (k.startsWith('param_')) params[k.slice(6)] = v;
    }
    body = Buffer.alloc(0);
  }
  let insertData: Buffer | undefined;
  if (search.has('query') && body.length > 0) {
    // The URL holds the query and the body its data (an INSERT), as a server reads it.
    if (/^\s*INSERT\s+INTO\s+[A-Za-z0-9_.`]+\s*(\([^)]*\))?\s*FORMAT\s+(JSONEachRow|JSONCompactEachRow|CSV|CSVWithNames|TSV|TabSeparated|TSVWithNames|TabSeparatedWithNames)\s*$/is.test(sql)) {
      insertData = body;
    } else {
      sql = `${sql}\n${body.toString()}`;
    }
  } else if (!search.has('query') && !multipart) {
    sql = body.toString();
  }
  if (req.method === 'GET' && !/^\s*(\(\s*)*(SELECT|WITH|SHOW|DESC|DESCRIBE|EXISTS|EXPLAIN)\b/i.test(sql)) {
    throw new EngineError(
      'Code: 164. DB::Exception: Cannot execute query in readonly mode. For queries over HTTP, method GET implies readonly. You should use method POST for modifying queries. (READONLY)',
      164,
      'READONLY',
    );
  }
  if (!sql.trim()) throw new EngineError('Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)', 62, 'SYNTAX_ERROR');
  const inText = /\bFORMAT\s+([A-Za-z0-9_]+)\s*;?\s*$/i.exec(sql);
  const format = inText?.[1] ?? search.get('default_format') ?? 'TabSeparated';
  const accepts = String(req.headers['accept-encoding'] ?? '');
  const compressResponse =
    search.get('enable_http_compression') === '1' ? (['gzip', 'deflate', 'br'].find((c) => accepts.includes(c)) ?? null) : null;
  return {
    sql: sql.replace(/;\s*$/, ''),
    ...(insertData ? { insertData } : {}),
    params,
    settings,
    database: search.get('database') ?? (url.pathname.replace(/\//g, '') || 'default'),
    format,
    queryId: search.get('query_id') || randomUUID(),
    compressResponse,
  };
}

/** The request body, decompressed by its Content-Encoding. */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const encoding = String(req.headers['content-encoding'] ?? '').toLowerCase();
  const source: Readable =
    encoding === 'gzip'
      ? req.pipe(createGunzip())
      : encoding === 'deflate'
        ? req.pipe(createInflate())
        : encoding === 'br'
          ? req.pipe(createBrotliDecompress())
          : req;
  if (encoding && !['gzip', 'deflate', 'br', 'identity'].includes(encoding)) {
    throw new EngineError(`Code: 1. DB::Exception: Unknown HTTP compression method ${encoding}. (UNSUPPORTED_METHOD)`, 1, 'UNSUPPORTED_METHOD');
  }
  const chunks: Buffer[] = [];
  for await (const c of source) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const quote = (s: string): string => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;
const backquote = (s: string): string => `\`${s.replace(/[\\`]/g, (c) => `\\${c}`)}\``;

/** A statement sent as @clickhouse/client sends one; rejects with the server's text. */
async function command(base: string, sql: string): Promise<void> {
  const res = await fetch(`${base}/`, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(text);
}

/** A bridge in a child process (chDB on that process' main thread, its own data directory); it exits with its parent. */
export async function spawnClickHouseBridge(dataDir: string, opts: BridgeOptions & { removeDataDir?: boolean } = {}): Promise<ClickHouseBridge> {
  const args = [fileURLToPath(import.meta.url), dataDir, String(opts.connections ?? 8), ...(opts.removeDataDir ? ['remove'] : [])];
  const child: ChildProcess = spawn(process.execPath, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^listening (http:\/\/\S+)$/m.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the ClickHouse bridge exited (${code}) before listening: ${out}`)));
  });
  child.unref();
  (child.stdout as unknown as { unref?: () => void }).unref?.();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  let closing: Promise<void> | null = null;
  return {
    url,
    database: async (name) => {
      await command(url, `CREATE DATABASE IF NOT EXISTS ${backquote(name)}`);
      return `${url}/${name}`;
    },
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        // Referenced again while it stops: an unreferenced child's exit would not keep this process waiting for it.
        child.ref();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.stdin!.end(); // the bridge closes its engine and exits when its stdin ends
      })),
  };
}

// Run as a program: serve, print the URL, stop when stdin ends (the parent closed it or exited).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dataDir = process.argv[2];
  if (!dataDir) {
    process.stderr.write('usage: clickhouse-bridge.js <data dir> [connections]\n');
    process.exit(2);
  }
  const bridge = await serveClickHouseBridge(dataDir, { connections: Number(process.argv[3] ?? 8) });
  process.stdout.write(`listening ${bridge.url}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void bridge.close().then(() => {
      if (process.argv[4] === 'remove') rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}
