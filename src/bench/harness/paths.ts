/** Where the bench finds the built service, the SQL migrations and its results, from dist/src/bench/harness. */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A path relative to the repository root. */
export const repoPath = (p: string): string => fileURLToPath(new URL(`../../../../${p}`, import.meta.url));

/**
 * The built service entry point: the bench measures what production runs.
 * BENCH_SERVICE_MAIN points it at another build (e.g. a patched copy, to
 * measure what a change would buy before making it).
 */
export const serviceMain = process.env.BENCH_SERVICE_MAIN ?? repoPath('dist/src/main.js');
export const resultsDir = repoPath('bench/results');
export const baselineFile = repoPath('bench/baseline.json');

/**
 * A fresh directory for a run's stores, removed by the caller. Under
 * BENCH_DATA_DIR when set, else the system's temporary directory: ClickHouse
 * creates and deletes dozens of files per insert, and what that costs depends
 * on the filesystem (docs/performance.md, "Settings that trade one thing for another"),
 * so the bench can measure on the disk production uses.
 */
export function benchDataDir(prefix: string): string {
  const parent = process.env.BENCH_DATA_DIR || tmpdir();
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(join(parent, prefix));
}
