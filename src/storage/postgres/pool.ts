/**
 * The one way to build a slonik pool, used by the main thread and by worker
 * threads alike so that every connection parses types the same way.
 */
import { createPool, type DatabasePool } from 'slonik';
import { createTypeParsers } from './type-parsers.js';
import { resultParser } from './result-parser.js';
import { rethrowAs } from '../outage.js';

/**
 * Adds startup options that pin the session to UTC and ISO date output. They
 * are startup parameters rather than a `SET`, so slonik's `DISCARD ALL` on
 * connection release resets back to them. (PGlite ignores startup options;
 * its only session already defaults to UTC and ISO.)
 */
export function withUtcSession(url: string): string {
  const parsed = new URL(url);
  const pinned = '-c TimeZone=UTC -c DateStyle=ISO';
  const existing = parsed.searchParams.get('options');
  parsed.searchParams.set('options', existing ? `${existing} ${pinned}` : pinned);
  return parsed.toString();
}

export async function connectPool(
  url: string,
  opts: { maxSize?: number } = {},
): Promise<DatabasePool> {
  // createPool connects once up front (to look up type OIDs), so it rejects when the server is down.
  const pool = await createPool(withUtcSession(url), {
    maximumPoolSize: opts.maxSize ?? 10,
    typeParsers: createTypeParsers(),
    interceptors: [resultParser],
  });
  return reportingOutages(pool);
}

/**
 * `pool` whose queries and transactions reject with the `postgres` 503
 * (src/storage/outage.ts) when the server cannot be reached, on whichever
 * thread they run; other errors pass unchanged.
 */
function reportingOutages(pool: DatabasePool): DatabasePool {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(pool, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (typeof value !== 'function' || key === 'end' || key === 'getPoolState') return value;
      let fn = wrapped.get(key);
      if (!fn) {
        const method = value as (...args: unknown[]) => unknown;
        fn = (...args: unknown[]) => {
          const result = method.apply(target, args);
          return result instanceof Promise ? result.catch(postgresDown) : result;
        };
        wrapped.set(key, fn);
      }
      return fn;
    },
  });
}

const postgresDown = rethrowAs('postgres');
