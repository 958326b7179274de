/**
 * An embedded Postgres for ceilings measured straight on the store: PGlite
 * started with startEmbedded in a process of its own (pglite-server.ts) in a
 * temporary directory, migrated like the service's, reached with connectPool.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DatabasePool } from 'slonik';
import { connectPool } from '../../storage/postgres/pool.js';
import { migratePostgres } from '../../storage/postgres/migrate.js';
import { startChild } from './child.js';
import { benchDataDir, repoPath } from './paths.js';

export async function withDirectPostgres<T>(work: (pool: DatabasePool, pid: number) => Promise<T>): Promise<T> {
  const dir = benchDataDir('cp-bench-pg-');
  try {
    const server = await startChild(fileURLToPath(new URL('./pglite-server.js', import.meta.url)), {}, 120_000, [], [join(dir, 'postgres')]);
    try {
      const pool = await connectPool(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
      try {
        await migratePostgres(pool, repoPath('sql/postgres'));
        return await work(pool, server.pid);
      } finally {
        await pool.end();
      }
    } finally {
      await server.stop(30_000);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
