/**
 * npm run bench:compare-load runs two builds' storage layers under the dashboards' load, each in a process of its
 * own: here the built tree against itself on a small seeded store, end to end (a line per call with figures from
 * both sides, and the feed's records counted in the store afterwards), and its usage errors.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const compareLoad = fileURLToPath(new URL('../../src/bench/compare-load.js', import.meta.url));
const dist = fileURLToPath(new URL('../..', import.meta.url));

t.test('compares a build with itself: every call loaded on both sides while records are inserted', async (t) => {
  const seedDir = mkdtempSync(join(tmpdir(), 'cp-compare-load-'));
  t.teardown(() => rmSync(seedDir, { recursive: true, force: true }));
  const calls = ['summary_last7d_trends', 'realtime_master'];
  const run = spawnSync(process.execPath, [compareLoad, dist, dist, '--rows', '20000', '--rounds', '2', '--seconds', '2', '--calls', calls.join(',')], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, BENCH_SEED_DIR: seedDir },
  });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /compare-load: 20,000 rows, 2 rounds, 10 reads in flight for 2 s a call; A .* \(2000 records inserted every 1000 ms\), B .* \(2000 records inserted every 1000 ms\)/);
  for (const name of calls) {
    const line = run.stdout.split('\n').find((l) => l.trim().startsWith(`${name} `));
    const m = line && /reads\/s (\d+) \/ (\d+) \(B\/A [\d.]+, rounds [\d.]+-[\d.]+\), p50 \d+ \/ \d+ ms, p99 \d+ \/ \d+ ms/.exec(line);
    t.ok(m, `${name}: ${line}`);
    if (m) t.ok(Number(m[1]) > 0 && Number(m[2]) > 0, `${name} answered on both sides`);
  }
  // Two calls of 2 s each: the feed inserts a block at once and one a second after, so at least 4,000 records a side.
  const inserted = /inserted\s+(\d+) \/ (\d+) records a side/.exec(run.stdout);
  t.ok(inserted, 'the inserted line');
  if (inserted) for (const n of [inserted[1], inserted[2]]) t.ok(Number(n) >= 4000, `${n} records counted in logs`);
});

t.test('B with a feed of its own: none inserts nothing, the other side its records', async (t) => {
  const seedDir = mkdtempSync(join(tmpdir(), 'cp-compare-load-'));
  t.teardown(() => rmSync(seedDir, { recursive: true, force: true }));
  const run = spawnSync(process.execPath, [compareLoad, dist, dist, '--rows', '20000', '--rounds', '1', '--seconds', '2', '--calls', 'realtime', '--feed', '500/400', '--feed-b', '0'], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, BENCH_SEED_DIR: seedDir },
  });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /A .* \(500 records inserted every 400 ms\), B .* \(no records inserted\)/);
  // 2 s of reads with an insert every 400 ms: at least five inserts of 500 on A's side.
  const inserted = /inserted\s+(\d+) \/ (\d+) records a side/.exec(run.stdout);
  t.ok(inserted, 'the inserted line');
  if (inserted) {
    t.ok(Number(inserted[1]) >= 2500, `A: ${inserted[1]} records counted in logs`);
    t.equal(Number(inserted[2]), 0, 'B inserted nothing');
  }
});

t.test('a read name the build does not have fails the run', async (t) => {
  const seedDir = mkdtempSync(join(tmpdir(), 'cp-compare-load-'));
  t.teardown(() => rmSync(seedDir, { recursive: true, force: true }));
  const run = spawnSync(process.execPath, [compareLoad, dist, dist, '--rows', '20000', '--rounds', '1', '--seconds', '1', '--calls', 'no_such_read'], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, BENCH_SEED_DIR: seedDir },
  });
  t.not(run.status, 0);
  t.match(run.stderr, /no read named no_such_read/);
});

t.test('refuses a call without two builds, or with a bad count', async (t) => {
  const refused = [[dist], [dist, dist, dist], [dist, dist, '--rounds', '0'], [dist, dist, '--seconds', 'x'], [dist, dist, '--feed', '2000'], [dist, dist, '--feed-b', '0/1000'], [dist, dist, '--feed', '10/0']];
  for (const args of refused) {
    const run = spawnSync(process.execPath, [compareLoad, ...args], { encoding: 'utf8' });
    t.equal(run.status, 2, args.join(' '));
    t.match(run.stderr, /usage: compare-load\.js/);
  }
});
