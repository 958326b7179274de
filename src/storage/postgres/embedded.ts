/**
 * Embedded Postgres: PGlite persisted in a directory, served on a loopback
 * socket so the rest of the service (and worker threads) reach it through the
 * same pg driver and URL-based pool as a real server.
 *
 * PGlite is a single backend session: the socket server (embedded-server.ts)
 * multiplexes every client connection onto it, running each connection's
 * protocol exchanges (up to a Sync or a simple Query) whole and one
 * transaction at a time (statements of other connections wait until the open
 * transaction ends). Session state is therefore shared by all connections,
 * which is why nothing here relies on session-level settings or session
 * advisory locks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { settingSpecs } from '../../config/settings.js';
import { serveEmbedded } from './embedded-server.js';

export interface EmbeddedPostgres {
  /** postgres:// URL of the loopback socket server. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Directories this process has open; the lock file alone cannot tell our own pid apart from a reused one. */
const openDirs = new Set<string>();

const LOCK_FILE = 'embedded.lock';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite itself does not refuse a second instance on a directory in use (both
 * would write the same files and corrupt them), so guard it with a pid file.
 * A lock left by a dead process, or by an earlier run with our own pid (pid 1
 * in containers), is stale and taken over.
 */
function acquireLock(dir: string): () => void {
  if (openDirs.has(dir)) {
    throw new Error(`embedded Postgres data dir ${dir} is already open in this process`);
  }
  const lockPath = path.join(dir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(lockPath, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const pid = Number.parseInt(fs.readFileSync(lockPath, 'utf8'), 10);
      if (pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new Error(`embedded Postgres data dir ${dir} is in use by process ${pid} (${lockPath})`);
      }
      fs.rmSync(lockPath, { force: true });
    }
  }
  openDirs.add(dir);
  return () => {
    openDirs.delete(dir);
    fs.rmSync(lockPath, { force: true });
  };
}

export async function startEmbedded(
  dataDir: string,
  opts: {
    maxConnections?: number;
    sharedBuffersMb?: number;
    /** Called once the lock is taken, before PGlite starts: the service then opens the data directory's other stores. */
    onLocked?: () => void;
  } = {},
): Promise<EmbeddedPostgres> {
  const dir = path.resolve(dataDir);
  // PGlite creates only the last path segment.
  fs.mkdirSync(dir, { recursive: true });
  const release = acquireLock(dir);
  opts.onLocked?.();
  let db: PGlite | undefined;
  try {
    db = new PGlite({
      dataDir: dir,
      // PGlite writes its whole buffer pool at start: every MB of it stays resident (Postgres' default is 128).
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${opts.sharedBuffersMb ?? settingSpecs.pgliteSharedBuffersMb.default}MB`],
    });
    await db.waitReady;
    const server = await serveEmbedded(db, {
      host: '127.0.0.1',
      port: 0,
      // Worker threads open pools of their own against the same server.
      maxConnections: opts.maxConnections ?? 100,
    });
    const url = `postgres://postgres@127.0.0.1:${server.port}/postgres`;
    const pglite = db;
    let stopped: Promise<void> | undefined;
    return {
      url,
      stop: () =>
        (stopped ??= (async () => {
          try {
            // Resolves once a client's open transaction has been rolled back.
            await server.stop();
            await pglite.close();
          } finally {
            release();
          }
        })()),
    };
  } catch (err) {
    await db?.close().catch(() => undefined);
    release();
    throw err;
  }
}
