/**
 * logs-list: the logs list (src/storage/clickhouse/logs.ts, listLogs, the code
 * the route runs) over seeded stores of two sizes in one run, by rows read.
 *
 * For each size in BENCH_LOGS_LIST_ROWS (default "1000000,10000000"; the
 * issue's figure is 200,000,000), a seeded store (harness/seeded-store.ts:
 * 200 masters, 5,000 keys, 40 models, 4 groups, ~3% 429 and ~1% 500 over 30
 * days) is opened and every case is read: the first page newest first with
 * each filter alone and combined, a keyset page deep in a range (following
 * next_cursor), and offset 100,000, after two unmeasured pages that load the
 * indexes as a running service has. Per case: rows read (ClickHouse's own
 * count, deterministic on a shared machine), the time of the slowest of
 * `--rounds` reads (cold: the first), and the total checked against a raw
 * count. Then, per case, how much the rows read grew from the smallest size to
 * the largest, beside how much the log count grew.
 */
import { openClickHouse } from '../../storage/clickhouse/open.js';
import { countLogs, cursorOf, listLogs, parseCursor, type LogCursor, type LogFilter } from '../../storage/clickhouse/logs.js';
import { countingReader } from '../harness/read-rows.js';
import { okResult, target, type ScenarioResult } from '../harness/results.js';
import { seededStore } from '../harness/seeded-store.js';
import { printTable } from '../harness/table.js';
import type { ScenarioOptions } from './options.js';

const name = 'logs-list';
const LIMIT = 50;

interface Case {
  label: string;
  filter: LogFilter;
  offset?: number;
  /** Pages followed through next_cursor before the measured one. */
  deep?: number;
}

function cases(endSec: number): Case[] {
  const hour = { since: endSec - 3600, until: endSec };
  const day = { since: endSec - 86_400 - 1234, until: endSec - 4321 };
  return [
    { label: 'first page', filter: {} },
    { label: 'master', filter: { master_id: 17 } },
    { label: 'key', filter: { key_id: 433 } },
    { label: 'model', filter: { model: 'model-7' } },
    { label: 'group', filter: { group: 'g2' } },
    { label: 'status 500', filter: { status_code: 500 } },
    { label: 'errors only', filter: { error_only: true } },
    { label: 'last hour', filter: hour },
    { label: 'master+model+status', filter: { master_id: 17, model: 'model-1', status_code: 200 } },
    { label: 'key+range', filter: { key_id: 433, ...day } },
    { label: 'model+group+range', filter: { model: 'model-3', group: 'g1', ...day } },
    { label: 'errors+master+range', filter: { master_id: 17, error_only: true, ...day } },
    { label: 'keyset page 200 of a day', filter: day, deep: 199 },
    { label: 'offset 100,000', filter: {}, offset: 100_000 },
  ];
}

interface Measure {
  rowsRead: number;
  worstMs: number;
  total: number;
  rawTotal: number;
}

async function measure(dir: string, endSec: number, rounds: number): Promise<Map<string, Measure>> {
  const out = new Map<string, Measure>();
  // chDB is opened through the service's own transport (the store's owner in this process), then read beside it.
  const ch = await openClickHouse({ dataDir: dir });
  const reader = await countingReader(dir);
  try {
    // A running service has read its tables before: the process's first reads load the primary indexes and marks
    // (110-145 ms for whichever case came first). Two pages on values no case uses take that cost unmeasured.
    for (const f of [{ master_id: 1 }, { model: 'model-39' }]) await listLogs(reader, f, LIMIT, 0);
    for (const c of cases(endSec)) {
      let cursor: LogCursor | undefined;
      for (let p = 0; p < (c.deep ?? 0); p++) {
        const page = await listLogs(ch, c.filter, LIMIT, 0, cursor);
        if (page.items.length < LIMIT) break; // a small store: as deep as it goes
        cursor = parseCursor(cursorOf(page.items[page.items.length - 1]!))!;
      }
      let worstMs = 0;
      let rowsRead = 0;
      let total = 0;
      for (let r = 0; r < Math.max(1, rounds); r++) {
        reader.take();
        const t = performance.now();
        const page = await listLogs(reader, c.filter, LIMIT, c.offset ?? 0, cursor);
        worstMs = Math.max(worstMs, performance.now() - t);
        rowsRead = reader.take().rowsRead;
        total = page.total;
      }
      out.set(c.label, { rowsRead, worstMs, total, rawTotal: await countLogs(ch, c.filter) });
    }
  } finally {
    reader.close();
    await ch.close();
  }
  return out;
}

export async function logsList(opts: ScenarioOptions = {}): Promise<ScenarioResult> {
  const sizes = (process.env.BENCH_LOGS_LIST_ROWS ?? '1000000,10000000').split(',').map(Number).sort((a, b) => a - b);
  if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1000)) throw new Error('BENCH_LOGS_LIST_ROWS: row counts of 1000 or more, comma-separated');
  const rounds = opts.rounds ?? 3;
  const bySize: Array<{ rows: number; store: Awaited<ReturnType<typeof seededStore>>; m: Map<string, Measure> }> = [];
  // chDB is one engine per process: each size is opened, read and closed in turn.
  for (const rows of sizes) {
    const store = await seededStore(rows);
    bySize.push({ rows, store, m: await measure(store.dir, store.endSec, rounds) });
  }
  const small = bySize[0]!;
  const large = bySize[bySize.length - 1]!;
  const growth = large.rows / small.rows;
  const figures: ScenarioResult['figures'] = { sizes: sizes.join(','), rounds, log_growth: growth };
  const rowsOut: Array<[string, string]> = [];
  let wrongTotals = 0;
  let worstGrowth = 0;
  let worstMs = 0;
  for (const [label] of small.m) {
    const cells = bySize.map(({ m }) => m.get(label)!);
    for (const c of cells) if (c.total !== c.rawTotal) wrongTotals++;
    const g = cells[cells.length - 1]!.rowsRead / Math.max(1, cells[0]!.rowsRead);
    worstGrowth = Math.max(worstGrowth, g);
    worstMs = Math.max(worstMs, cells[cells.length - 1]!.worstMs);
    const key = label.replace(/[^a-z0-9]+/gi, '_').toLowerCase();
    bySize.forEach(({ rows }, i) => {
      figures[`${key}_rows_read_${rows}`] = cells[i]!.rowsRead;
      figures[`${key}_worst_ms_${rows}`] = Math.round(cells[i]!.worstMs * 10) / 10;
    });
    figures[`${key}_rows_read_growth`] = g;
    rowsOut.push([
      label,
      `${cells.map((c) => `${c.rowsRead.toLocaleString('en-US')} rows, ${c.worstMs.toFixed(0)} ms`).join(' | ')} | x${g.toFixed(2)}${cells.some((c) => c.total !== c.rawTotal) ? ' | TOTAL WRONG' : ''}`,
    ]);
  }
  for (const { rows, store } of bySize) {
    figures[`seed_seconds_${rows}`] = store.seedSeconds;
    figures[`disk_bytes_${rows}`] = store.bytes;
  }
  figures.wrong_totals = wrongTotals;
  printTable(`${name}: rows read and worst of ${rounds} reads per size (${sizes.join(' | ')} rows), growth of rows read (log count x${growth})`, [
    ...rowsOut,
    ['totals equal to a raw count', wrongTotals === 0 ? 'yes' : `NO (${wrongTotals})`],
    ...bySize.map(({ rows, store }): [string, string] => [`seeded ${rows}`, `${store.seedSeconds.toFixed(1)} s, ${(store.bytes / 1e6).toFixed(0)} MB${store.reused ? ' (reused)' : ''}`]),
  ]);
  return okResult(
    name,
    { name: 'worst growth of rows read / growth of the log count', value: worstGrowth / growth },
    figures,
    [
      target('every total equals a raw count', wrongTotals, 0, true),
      target('rows read grow less than the log count (worst case)', worstGrowth, growth - 1e-9, true),
      target('p99 < 100 ms at the largest size (worst case, cold)', worstMs, 100 - 1e-9, true),
    ],
  );
}
