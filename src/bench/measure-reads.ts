/**
 * Seeds the dashboards bench's data at each size given (BENCH_READ_SIZES,
 * default "1000000,10000000"), then prints per call the rows it reads from
 * storage (read_rows) and per rollup its rows per million logs, as JSON: the figures
 * docs/analytics.md records. Row counts, not timings: safe on a shared machine.
 * Usage: node dist/src/bench/measure-reads.js
 */
import { rmSync } from 'node:fs';
import { benchDataDir } from './harness/paths.js';
import { seed } from './scenarios/dashboards.js';
import { measureReads, tableRows } from './scenarios/dashboard-reads.js';
import { openClickHouse } from '../storage/clickhouse/open.js';
import { countingReader } from './harness/read-rows.js';

const sizes = (process.env.BENCH_READ_SIZES ?? '1000000,10000000').split(',').map(Number);
const endSec = Math.floor(Date.now() / 60_000) * 60;
const out: Record<string, unknown> = {};
for (const rows of sizes) {
  const dir = benchDataDir('cp-reads-');
  try {
    const s = await seed(dir, rows, endSec);
    const ch = await openClickHouse({ dataDir: dir });
    let tables: Record<string, number>;
    try {
      tables = await tableRows(ch);
    } finally {
      await ch.close();
    }
    const reader = await countingReader(dir);
    try {
      const perMillion = Object.fromEntries(Object.entries(tables).map(([t, n]) => [t, Math.round((n / rows) * 1e6)]));
      out[rows] = { seed_s: s.insertS + s.optimizeS, reads: await measureReads(reader, endSec, 1), table_rows: tables, rows_per_million_logs: perMillion };
    } finally {
      reader.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify({ [rows]: out[rows] })}\n`);
}
