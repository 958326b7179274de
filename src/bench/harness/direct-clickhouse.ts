/**
 * The log store's own ceiling: an embedded chDB opened in the bench process
 * (main thread, one instance per process, as chDB requires) in its own
 * temporary directory, migrated like the service's, taking inserts directly.
 */
import { rmSync } from 'node:fs';
import { openClickHouse } from '../../storage/clickhouse/open.js';
import { migrateClickHouse } from '../../storage/clickhouse/migrate.js';
import type { ClickHouse } from '../../storage/clickhouse/client.js';
import { benchDataDir, repoPath } from './paths.js';

export async function withDirectClickHouse<T>(work: (ch: ClickHouse) => Promise<T>): Promise<T> {
  const dir = benchDataDir('cp-bench-ch-');
  try {
    const ch = await openClickHouse({ dataDir: dir });
    try {
      await migrateClickHouse(ch, repoPath('sql/clickhouse'));
      return await work(ch);
    } finally {
      await ch.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Batch {
  data: Buffer;
  rows: number;
}

/** Inserts the batches in order, cycling, one insert each, until `records` rows are in; rows per second. */
export async function insertRate(ch: ClickHouse, batches: Batch[], records: number): Promise<{ rows: number; seconds: number; rate: number }> {
  let rows = 0;
  const started = performance.now();
  for (let i = 0; rows < records; i++) {
    const b = batches[i % batches.length]!;
    await ch.insert('logs', b.data);
    rows += b.rows;
  }
  const seconds = (performance.now() - started) / 1000;
  return { rows, seconds, rate: rows / seconds };
}
