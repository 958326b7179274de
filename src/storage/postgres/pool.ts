/**
 * The one way to build a slonik pool, used by the main thread and by worker
 * threads alike so that every connection parses types the same way.
 */
import { createPool, type DatabasePool } from 'slonik';
import { createTypeParsers } from './type-parsers.js';

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
  return createPool(withUtcSession(url), {
    maximumPoolSize: opts.maxSize ?? 10,
    typeParsers: createTypeParsers(),
  });
}
