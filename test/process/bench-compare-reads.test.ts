/**
 * npm run bench:compare-reads runs two builds' dashboard reads in one process: here the built tree against itself
 * on a small seeded store, end to end (a line per call, and the same build answering every read alike, which holds
 * only when both sides make the same reads), and its usage errors.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const compareReads = fileURLToPath(new URL('../../src/bench/compare-reads.js', import.meta.url));
const dist = fileURLToPath(new URL('../..', import.meta.url));

t.test('compares a build with itself: every call timed, every answer alike', async (t) => {
  const seedDir = mkdtempSync(join(tmpdir(), 'cp-compare-reads-'));
  t.teardown(() => rmSync(seedDir, { recursive: true, force: true }));
  const run = spawnSync(process.execPath, [compareReads, dist, dist, '--rows', '20000', '--rounds', '2', '--reads', '2'], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, BENCH_SEED_DIR: seedDir },
  });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /compare-reads: 20,000 rows, 2 rounds of 2 reads a call, one at a time/);
  const calls = run.stdout.split('\n').filter((l) => /CPU [\d.]+ \/ [\d.]+ ms a read \(B\/A [\d.]+, rounds [\d.]+-[\d.]+\), wall/.test(l));
  t.equal(calls.length, 16, 'a line per dashboards read');
  for (const line of calls) t.match(line, /answers alike 4\/4$/, line.trim().split(/\s+/)[0]);
});

t.test('refuses a call without two builds, or with a bad count', async (t) => {
  for (const args of [[dist], [dist, dist, dist], [dist, dist, '--rounds', '0'], [dist, dist, '--reads', 'x']]) {
    const run = spawnSync(process.execPath, [compareReads, ...args], { encoding: 'utf8' });
    t.equal(run.status, 2, args.join(' '));
    t.match(run.stderr, /usage: compare-reads\.js/);
  }
});
