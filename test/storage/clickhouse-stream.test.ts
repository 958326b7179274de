/**
 * Streamed SELECTs (ClickHouse.stream) on chDB: whole results, one header, early exits, errors. The HTTP transport's
 * streams run against the bridge in clickhouse-http.test.ts.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';

const text = async (it: AsyncIterable<Uint8Array>): Promise<string> => {
  const parts: Buffer[] = [];
  for await (const c of it) parts.push(Buffer.from(c));
  return Buffer.concat(parts).toString();
};

t.test('chdb: every row once, one header line across blocks, bound values, early exits free the connection', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ch-stream-'));
  const ch = await openClickHouse({ dataDir, connections: 2 });
  t.teardown(async () => {
    await ch.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await ch.command('CREATE TABLE t (n UInt64, s String) ENGINE = MergeTree ORDER BY n');
  // Three inserts: three parts, so several blocks come back.
  for (let i = 0; i < 3; i++) await ch.command(`INSERT INTO t SELECT number + ${i * 100_000}, concat('v,"', toString(number), '"') FROM numbers(100000)`);

  const csv = await text(await ch.stream('SELECT n, s FROM t WHERE n >= {from:UInt64} ORDER BY n DESC', { from: 1000 }, 'CSVWithNames'));
  const lines = csv.trimEnd().split('\n');
  t.equal(lines[0], '"n","s"');
  t.equal(lines.filter((l) => l === '"n","s"').length, 1, 'the header once, though chDB sends one per block');
  t.equal(lines.length, 1 + 300_000 - 1000);
  t.equal(lines[1], '299999,"v,""99999"""');
  t.equal(lines.at(-1), '1000,"v,""1000"""');
  t.equal(await text(await ch.stream('SELECT n FROM t WHERE n > 1e9', {}, 'CSVWithNames')), '"n"\n', 'an empty result is its header');

  // More early exits than there are streaming connections: each one goes back to the pool.
  for (let i = 0; i < 7; i++) {
    const it = await ch.stream('SELECT n, s FROM t ORDER BY n', {}, 'CSV');
    const first = await it.next();
    t.notOk(first.done);
    await it.return!();
  }
  // Never iterated at all: return() alone frees it too.
  for (let i = 0; i < 5; i++) await (await ch.stream('SELECT 1', {}, 'CSV')).return!();

  // Streams and ordinary queries side by side: a query does not cut a stream.
  const a = await ch.stream('SELECT n FROM t ORDER BY n', {}, 'TSVWithNames');
  const b = await ch.stream('SELECT n FROM t WHERE n % 2 = 0 ORDER BY n', {}, 'TSVWithNames');
  const [ta, tb, q] = await Promise.all([text(a), text(b), ch.query<{ c: number }>('SELECT count() AS c FROM t')]);
  t.equal(ta.trimEnd().split('\n').length, 300_001);
  t.equal(tb.trimEnd().split('\n').length, 150_001);
  t.equal(Number(q[0]!.c), 300_000);

  await t.rejects(ch.stream('SELECT nope FROM t', {}, 'CSV'), /nope/, 'a bad query rejects before any byte');
  t.equal((await ch.query<{ c: number }>('SELECT count() AS c FROM t'))[0]!.c, 300_000, 'and the store still answers');

  const open = await ch.stream('SELECT n FROM t ORDER BY n', {}, 'CSV');
  await open.next();
  await ch.close(); // with a stream still open
  await t.rejects(ch.stream('SELECT 1'), /closed/);
});
