/** Streamed SELECTs (ClickHouse.stream) on both transports: whole results, one header, early exits, errors. */
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

t.test('http: the body as it arrives, FORMAT appended, parameters bound, return() hangs up', async (t) => {
  const seen: Array<{ url: URL; body: string }> = [];
  let closedEarly = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = Buffer.concat(chunks).toString();
      seen.push({ url, body });
      if (body.includes('bad')) {
        res.writeHead(400, { 'X-ClickHouse-Exception-Code': '47' });
        res.end('Code: 47. DB::Exception: Unknown identifier bad');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.write('"n"\n');
      let i = 0;
      const more = () => {
        while (i < 20_000) {
          const line = `${i++}${'x'.repeat(1000)}\n`;
          if (!res.write(line)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', () => {
        if (i < 20_000) closedEarly++;
      });
      more();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const http = await openClickHouse({ url: `http://127.0.0.1:${port}`, dataDir: tmpdir(), database: 'gateway' });
  t.teardown(() => http.close());

  const all = await text(await http.stream('SELECT n FROM logs WHERE master_id = {m:UInt64}', { m: 7 }));
  t.equal(all.split('\n').length - 1, 20_001);
  t.match(seen[0]!.body, /^SELECT n FROM logs WHERE master_id = \{m:UInt64\}\s+FORMAT CSVWithNames\s*$/);
  t.equal(seen[0]!.url.searchParams.get('param_m'), '7');

  const early = await http.stream('SELECT n FROM logs', {}, 'CSV');
  await early.next();
  await early.return!();
  await new Promise((r) => setTimeout(r, 200));
  t.equal(closedEarly, 1, 'leaving early closes the connection; the server stops writing');

  await t.rejects(http.stream('SELECT bad'), /Unknown identifier/, 'an error status rejects');
});
