/**
 * Telling a store that cannot be reached from a request the store refused.
 * Connection failures (refused, reset, timed out, terminated, too many
 * clients) become one typed error, 503 `unavailable` with `Retry-After` and
 * the store's name, where they surface: in the storage layer. Everything else
 * (constraint violations, syntax, a ClickHouse data error) passes unchanged.
 */
import { AppError, storeUnavailable, type StoreName } from '../errors.js';

/** Socket-level failures (Node, undici) on the way to a store. */
const socketCodes = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH',
  'ENETUNREACH', 'ENETDOWN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED',
]);

/**
 * Postgres SQLSTATEs that mean the server is not there for us: class 08
 * (connection exception), 57P01-57P03 (shutting down, crash, starting up),
 * 53300 (too many connections).
 */
const pgUnreachable = /^(08...|57P0[123]|53300)$/;

/** Driver errors that are raised for a lost or never-made connection (slonik, pg, ioredis, @clickhouse/client). */
const connectionErrorNames = new Set(['ConnectionError', 'BackendTerminatedError', 'MaxRetriesPerRequestError']);
const connectionMessages =
  /connection terminated|connection timeout|timeout exceeded when trying to connect|connection is closed|stream isn't writeable|command timed out|socket hang up|^timeout error/i;

/** True when `err`, or an error it wraps, says the store could not be reached. */
export function isConnectionFailure(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e !== null && typeof e === 'object'; depth++) {
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && (socketCodes.has(code) || pgUnreachable.test(code))) return true;
    const ctor = (e as { constructor?: { name?: string } }).constructor?.name;
    if ((typeof name === 'string' && connectionErrorNames.has(name)) || (ctor && connectionErrorNames.has(ctor))) return true;
    if (typeof message === 'string' && connectionMessages.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** `err` as the store's 503 when it is a connection failure, else unchanged (typed errors always pass). */
export function classifyStoreError(store: StoreName, err: unknown): unknown {
  if (err instanceof AppError) return err;
  return isConnectionFailure(err) ? storeUnavailable(store) : err;
}

/** Rejects with the classified error: `promise.catch(rethrowAs('postgres'))`. */
export const rethrowAs =
  (store: StoreName) =>
  (err: unknown): never => {
    throw classifyStoreError(store, err);
  };
