/**
 * The conformance kit's command (docs/conformance.md):
 *
 *   npm run conformance -- --base http://127.0.0.1:8080 --admin-token T --internal-token I \
 *     [--out cases.json] [--steps N] [--pause] [--redis redis://host:6379/0] [--wait-ms 5000]
 *
 * Populates a fresh service through its API, performs the steps, and writes
 * every step's case table (credential, client address, model, namespace,
 * expected decision, reason, route) as JSON. --pause waits for Enter after each
 * step so a data plane can be checked against the state in force; --redis
 * checks the reference reader against the service's store at every step.
 */
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { Kit, steps, type StepResult } from './kit.js';
import { Reader, readerLayoutVersion } from './reader.js';
import { mismatch } from './compare.js';

function args(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out[a.slice(2)] = 'true';
    else out[a.slice(2)] = argv[++i]!;
  }
  return out;
}

/** Waits until every case of the step is decided as expected, or the time is up; returns the mismatches left. */
export async function checkStep(redis: Pick<Redis, 'get' | 'hgetall'>, step: StepResult, waitMs: number): Promise<string[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const problems: string[] = [];
    for (const c of step.cases) {
      const reader = new Reader(redis, () => Date.now() + c.at_offset_s * 1000);
      const got = await reader.decide({ credential: c.credential, clientIp: c.client_ip, model: c.model, namespace: c.namespace });
      const m = mismatch(got, c.expected);
      if (m) problems.push(`${c.name}: ${m}`);
    }
    const flags = await new Reader(redis).flags();
    for (const [name, value] of Object.entries(step.flags)) {
      if ((flags as unknown as Record<string, unknown>)[name] !== value) problems.push(`flag ${name}: expected ${String(value)}, got ${String((flags as unknown as Record<string, unknown>)[name])}`);
    }
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main(): Promise<number> {
  const a = args(process.argv.slice(2));
  if (!a.base || !a['admin-token'] || !a['internal-token']) {
    console.error('usage: npm run conformance -- --base URL --admin-token T --internal-token I [--out FILE] [--steps N] [--pause] [--redis URL] [--wait-ms MS]');
    return 2;
  }
  const kit = new Kit({ base: a.base.replace(/\/$/, ''), adminToken: a['admin-token'], internalToken: a['internal-token'] });
  const redis = a.redis ? new Redis(a.redis, { lazyConnect: true, maxRetriesPerRequest: 1 }) : null;
  await redis?.connect();
  const rl = a.pause ? createInterface({ input: process.stdin, output: process.stderr }) : null;
  const out = a.out ?? 'conformance-cases.json';
  let failed = 0;
  const results: StepResult[] = [];
  const write = () =>
    writeFileSync(out, JSON.stringify({ layout_version: readerLayoutVersion, base: a.base, generated_at: new Date().toISOString(), steps: results }, null, 2) + '\n');
  try {
    await kit.run(async (step) => {
      results.push(step);
      write();
      let line = `step ${step.index} (${step.name}): ${step.cases.length} cases, config version ${step.config_version}`;
      if (redis) {
        const problems = await checkStep(redis, step, Number(a['wait-ms'] ?? 5000));
        failed += problems.length;
        line += problems.length === 0 ? ', reference reader agrees' : `, ${problems.length} mismatches:\n  ${problems.join('\n  ')}`;
      }
      console.error(line);
      if (rl) await new Promise<void>((resolve) => rl.question(`state of step ${step.index} written to ${out}; Enter for the next step `, () => resolve()));
    }, Number(a.steps ?? steps.length));
  } finally {
    rl?.close();
    redis?.disconnect();
  }
  console.error(`wrote ${out}`);
  return failed === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(2);
    },
  );
}
