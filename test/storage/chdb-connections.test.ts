/**
 * The embedded engine's connections serve one queue: a call waits for the
 * first connection free, not behind a slow call on a connection chosen when it
 * arrived. Its own file, because the engine opens once per process and the
 * other chDB tests use one connection.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';

const dataDir = mkdtempSync(join(tmpdir(), 'ch-connections-'));
const ch = await openClickHouse({ dataDir, connections: 2 });
t.teardown(async () => {
  await ch.close();
  rmSync(dataDir, { recursive: true, force: true });
});

await t.test('a call queued while both connections are busy runs on the first one freed', async (t) => {
  const finished: string[] = [];
  const track = <T>(name: string, p: Promise<T>) => p.then((v) => (finished.push(name), v));
  // Two seconds on one connection; two quick calls arrive while it runs, the second when both connections are busy.
  const slow = track('slow', ch.query('SELECT sum(sleepEachRow(0.5)) AS s FROM numbers(4) SETTINGS max_block_size = 1'));
  const first = track('first', ch.query('SELECT 1 AS n'));
  const second = track('second', ch.query('SELECT 2 AS n'));
  t.same(await second, [{ n: 2 }]);
  t.same(await first, [{ n: 1 }]);
  t.same(finished, ['first', 'second'], 'both quick calls answered while the slow one still runs');
  t.same(await slow, [{ s: 0 }]);
});

await t.test('a call that fails frees its connection for the calls waiting', async (t) => {
  const calls = Array.from({ length: 6 }, (_, i) => (i % 2 ? ch.query('SELECT no_such_column FROM numbers(1)') : ch.query('SELECT {i:UInt8} AS i', { i })));
  const settled = await Promise.allSettled(calls);
  t.same(
    settled.map((s) => s.status),
    ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled', 'rejected'],
  );
  t.same(await ch.query('SELECT 7 AS n'), [{ n: 7 }], 'every connection is free again');
});

await t.test('close waits for the calls still queued', async (t) => {
  const queued = Array.from({ length: 5 }, (_, i) => ch.query('SELECT {i:UInt8} AS i', { i }));
  await ch.close();
  t.same(await Promise.all(queued), [0, 1, 2, 3, 4].map((i) => [{ i }]));
  await t.rejects(ch.query('SELECT 1'), /closed/);
});
