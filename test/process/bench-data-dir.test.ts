/**
 * The bench puts its stores' files under BENCH_DATA_DIR (else the temporary
 * directory) and records that directory's filesystem with every result,
 * because ClickHouse's insert cost depends on it (docs/log-pipeline.md).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { benchDataDir } from '../../src/bench/harness/paths.js';
import { filesystemOf, machine } from '../../src/bench/harness/machine.js';

t.test('benchDataDir makes a fresh directory under BENCH_DATA_DIR, creating the parent', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'bench-data-dir-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const saved = process.env.BENCH_DATA_DIR;
  t.teardown(() => (saved === undefined ? delete process.env.BENCH_DATA_DIR : (process.env.BENCH_DATA_DIR = saved)));

  process.env.BENCH_DATA_DIR = join(root, 'not', 'there', 'yet');
  const a = benchDataDir('cp-bench-x-');
  const b = benchDataDir('cp-bench-x-');
  t.not(a, b, 'each call is a new directory');
  t.equal(dirname(a), process.env.BENCH_DATA_DIR);
  t.ok(statSync(a).isDirectory());
  t.match(a, /cp-bench-x-[^/]+$/);
  t.equal(machine().dataDir, process.env.BENCH_DATA_DIR);

  delete process.env.BENCH_DATA_DIR;
  const c = benchDataDir('cp-bench-x-');
  t.teardown(() => rmSync(c, { recursive: true, force: true }));
  t.equal(dirname(c), tmpdir(), 'without it, the temporary directory');
});

t.test('filesystemOf names the mount holding a path, by its longest mount point', async (t) => {
  t.equal(filesystemOf('/proc/self'), 'proc');
  if (existsSync('/dev/shm')) t.equal(filesystemOf('/dev/shm'), 'tmpfs');
  // The root filesystem: ext4 says whether it has a journal (the costly case says so).
  t.match(filesystemOf('/'), /^(ext4|ext4 \(no journal\)|[a-z0-9]+)$/);
  t.equal(filesystemOf('/no/such/path/anywhere'), 'unknown', 'a path that does not resolve');
  t.equal(typeof machine().filesystem, 'string');
});
