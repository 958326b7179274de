/**
 * The log store's own ceiling: an embedded chDB opened in the bench process
 * (main thread, one instance per process, as chDB requires) in its own
 * temporary directory, migrated like the service's, taking inserts directly.
 */
import { rmSync } from 'node:fs';
import { openClickHouse } from '../../storage/clickhouse/open.js';
import { migrateClickHouse } from '../../storage/clickhouse/migrate.js';
import type { ClickHouse } from '../../storage/clickhouse/client.js';
import { countLogs } from '../../storage/clickhouse/logs.js';
import { dedupTokenOf } from '../../storage/clickhouse/write/writer.js';
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

/** Inserts so far in this process: each one's token is told apart by it. */
let insertSerial = 0;

/**
 * Inserts the batches in order, cycling, one insert each, until `records` rows are in; rows per second, and the
 * rows `logs` gained. Each insert carries a deduplication token of its own, the hash of its bytes as the service's
 * writer sends (writer.ts, dedupTokenOf) and a serial. The batches repeat, and `logs` drops a block whose hash it
 * holds among its last 10,000 (sql/clickhouse/009_insert_dedup.sql); without a token, repeats are told apart only
 * by the millisecond their `created_at` default stamps (the fixture's records carry none), and two repeats in one
 * millisecond would be dropped and timed as stored. `stored` says what was.
 */
export async function insertRate(
  ch: ClickHouse,
  batches: Batch[],
  records: number,
): Promise<{ rows: number; seconds: number; rate: number; stored: number }> {
  const before = await countLogs(ch);
  let rows = 0;
  const started = performance.now();
  for (let i = 0; rows < records; i++) {
    const b = batches[i % batches.length]!;
    await ch.insert('logs', b.data, { dedupToken: `${dedupTokenOf(b.data)}-${insertSerial++}` });
    rows += b.rows;
  }
  const seconds = (performance.now() - started) / 1000;
  return { rows, seconds, rate: rows / seconds, stored: (await countLogs(ch)) - before };
}
