/**
 * Reads a stopped service's embedded ClickHouse and prints, as one JSON line,
 * what it stores (stored-totals.ts) and the rollups that disagree with the raw
 * table group by group (rollup-check.ts). Run as its own process (chDB binds
 * one data directory per process): `node ch-read.js <data dir>`.
 */
import { openClickHouse } from '../../src/storage/clickhouse/open.js';
import { rollupMismatches, type RollupMismatch } from '../../src/storage/clickhouse/rollup-check.js';
import { storedTotals, type StoredTotals } from './stored-totals.js';

export interface Stored extends StoredTotals {
  mismatches: RollupMismatch[];
}

const ch = await openClickHouse({ dataDir: process.argv[2]! });
try {
  const out: Stored = { ...(await storedTotals(ch)), mismatches: await rollupMismatches(ch) };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
  await ch.close();
}
