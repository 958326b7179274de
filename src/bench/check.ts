/**
 * npm run bench:check: compares each scenario's ratio in bench/results/*.json
 * with its recorded figure in bench/baseline.json, printing every comparison,
 * and exits 1 when a ratio falls more than `tolerance` (20%) below its
 * recorded figure, or when a scenario with a baseline has no result. A
 * skipped scenario (its endpoint not there) is reported and not held against
 * the run. Ratios only: absolute figures mean nothing across machines.
 */
import { readFileSync } from 'node:fs';
import { readResults } from './harness/results.js';
import { baselineFile } from './harness/paths.js';
import { pct } from './harness/table.js';

interface Baseline {
  /** Allowed fall below the recorded ratio, as a fraction of it. */
  tolerance: number;
  ratios: Record<string, { ratio: number; recorded: string; note?: string }>;
}

const baseline = JSON.parse(readFileSync(baselineFile, 'utf8')) as Baseline;
const results = readResults();
let failed = 0;

for (const [scenario, recorded] of Object.entries(baseline.ratios)) {
  const r = results.get(scenario);
  const floor = recorded.ratio * (1 - baseline.tolerance);
  const head = `${scenario.padEnd(14)} baseline ${pct(recorded.ratio).padStart(6)}  floor ${pct(floor).padStart(6)}`;
  if (!r) {
    failed++;
    process.stdout.write(`${head}  FAIL: no bench/results/${scenario}.json (run npm run bench)\n`);
  } else if (r.status === 'skipped') {
    process.stdout.write(`${head}  skipped: ${r.reason}\n`);
  } else if (!r.ratio) {
    failed++;
    process.stdout.write(`${head}  FAIL: the result has no ratio\n`);
  } else {
    const ok = r.ratio.value >= floor;
    if (!ok) failed++;
    const change = (r.ratio.value / recorded.ratio - 1) * 100;
    // Rounded first, so that a change of -0.04% prints as +0.0%, not +-0.0%.
    const shown = Math.abs(change) < 0.05 ? '+0.0' : `${change > 0 ? '+' : ''}${change.toFixed(1)}`;
    process.stdout.write(`${head}  now ${pct(r.ratio.value).padStart(6)} (${shown}%, ${r.date})  ${ok ? 'ok' : 'FAIL: regression'}\n`);
  }
}
for (const scenario of results.keys()) {
  if (!(scenario in baseline.ratios)) process.stdout.write(`${scenario.padEnd(14)} no baseline recorded (add it to bench/baseline.json)\n`);
}
process.exit(failed ? 1 : 0);
