/**
 * npm run bench [-- name ...] [--seconds N] [--rounds N] [--service-node-args "--cpu-prof --cpu-prof-dir=DIR"]:
 * runs the named scenarios (all by default) one after the other, prints each
 * table and writes bench/results/<name>.json. Exits 1 when a scenario fails
 * to run; missed targets are reported, and bench:check judges regressions.
 */
import { writeResult } from './harness/results.js';
import { scenarios } from './scenarios/index.js';
import type { ScenarioOptions } from './scenarios/options.js';

function parseArgs(argv: string[]): { names: string[]; opts: ScenarioOptions } {
  const names: string[] = [];
  const opts: ScenarioOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--seconds') opts.seconds = Number(argv[++i]);
    else if (a === '--rounds') opts.rounds = Number(argv[++i]);
    else if (a === '--service-node-args') opts.nodeArgs = (argv[++i] ?? '').split(' ').filter(Boolean);
    else names.push(a);
  }
  return { names, opts };
}

const { names, opts } = parseArgs(process.argv.slice(2));
const unknown = names.filter((n) => !(n in scenarios));
if (unknown.length) {
  process.stderr.write(`unknown scenario(s): ${unknown.join(', ')}; known: ${Object.keys(scenarios).join(', ')}\n`);
  process.exit(2);
}

let failed = 0;
for (const name of names.length ? names : Object.keys(scenarios)) {
  process.stdout.write(`\n== ${name}\n`);
  try {
    const result = await scenarios[name]!(opts);
    const file = writeResult(result);
    if (result.status === 'skipped') process.stdout.write(`${name}: skipped: ${result.reason}\n`);
    for (const t of result.targets) process.stdout.write(`  target ${t.met ? 'met   ' : 'MISSED'}  ${t.name}\n`);
    process.stdout.write(`  -> ${file}\n`);
  } catch (err) {
    failed++;
    process.stderr.write(`${name} failed: ${(err as Error).stack ?? String(err)}\n`);
  }
}
process.exit(failed ? 1 : 0);
