/**
 * A copy of a seeded store shares the kept store's part files (hard links) but not its insert deduplication
 * logs, which ClickHouse appends in place: an insert into one copy must not reach the kept store or the next copy.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import t from 'tap';
import { copyOfStore, seededStore } from '../../src/bench/harness/seeded-store.js';

const files = (dir: string, pattern: string): string[] =>
  execFileSync('find', [dir, '-type', 'f', '-path', pattern], { encoding: 'utf8' }).split('\n').filter(Boolean);

t.test('a copy links the parts and copies the deduplication logs', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'bench-seeded-store-'));
  const saved = process.env.BENCH_SEED_DIR;
  t.teardown(() => {
    if (saved === undefined) delete process.env.BENCH_SEED_DIR;
    else process.env.BENCH_SEED_DIR = saved;
    rmSync(root, { recursive: true, force: true });
  });
  process.env.BENCH_SEED_DIR = join(root, 'seeded');
  const store = await seededStore(5000);
  const copy = copyOfStore(store);
  t.teardown(() => rmSync(copy, { recursive: true, force: true }));

  const logs = files(join(copy, 'clickhouse'), '*/deduplication_logs/*');
  t.ok(logs.length > 0, 'the copy has deduplication logs (logs and every rollup keep a window)');
  for (const log of logs) {
    const kept = join(store.dir, 'clickhouse', relative(join(copy, 'clickhouse'), log));
    t.not(statSync(log).ino, statSync(kept).ino, `${relative(copy, log)} is a file of its own`);
    const before = readFileSync(kept);
    appendFileSync(log, 'an insert into the copy\n');
    t.same(readFileSync(kept), before, 'appending to the copy leaves the kept store as it was');
  }
  const parts = files(join(copy, 'clickhouse', 'store'), '*/checksums.txt');
  t.ok(parts.length > 0);
  for (const part of parts) t.ok(statSync(part).nlink >= 2, `${relative(copy, part)} is a hard link`);
});
