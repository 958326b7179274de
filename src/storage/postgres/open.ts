/**
 * Opens the configuration database: the server at `url` when one is given,
 * otherwise an embedded PGlite under `${dataDir}/postgres`. The main thread
 * opens it, so its transactions turn slonik's context off again when they end
 * (transaction-context.ts); worker threads build their own pools.
 */
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import type { Database } from './database.js';
import { startEmbedded, type EmbeddedPostgres } from './embedded.js';
import { connectPool } from './pool.js';
import { releasingTransactionContext } from './transaction-context.js';

const PING_TIMEOUT_MS = 1_000;

export async function openDatabase(opts: {
  url?: string;
  dataDir: string;
  maxPoolSize?: number;
  /** Embedded only: PGlite's buffer pool (default: the setting's). */
  sharedBuffersMb?: number;
  /** Called once the embedded data directory is locked to this process (at once with a server): see startEmbedded. */
  onLocked?: () => void;
}): Promise<Database> {
  if (opts.url) opts.onLocked?.();
  const embedded = opts.url
    ? undefined
    : await startEmbedded(path.join(opts.dataDir, 'postgres'), { sharedBuffersMb: opts.sharedBuffersMb, onLocked: opts.onLocked });
  const url = opts.url ?? embedded!.url;
  let pool: DatabasePool;
  try {
    pool = releasingTransactionContext(await connectPool(url, { maxSize: opts.maxPoolSize }));
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
  return createDatabase(url, pool, embedded);
}

function createDatabase(url: string, pool: DatabasePool, embedded?: EmbeddedPostgres): Database {
  let closing: Promise<void> | undefined;
  return {
    url,
    embedded: embedded !== undefined,
    pool,
    ping: async () => {
      if (closing) return false;
      // A dead server can make slonik wait for its connection timeout and retries; health checks cannot.
      const query = pool.query(sql.unsafe`SELECT 1`).then(
        () => true,
        () => false,
      );
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(resolve, PING_TIMEOUT_MS, false);
      });
      try {
        return await Promise.race([query, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () =>
      (closing ??= (async () => {
        try {
          await pool.end();
        } finally {
          await embedded?.stop();
        }
      })()),
  };
}
