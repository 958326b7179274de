/** Where the bench finds the built service, the SQL migrations and its results, from dist/src/bench/harness. */
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
