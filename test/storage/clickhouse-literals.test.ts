import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inlineParams, literal, quoteString } from '../../src/storage/clickhouse/literals.js';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';

t.test('literals: quoting and rendering', async (t) => {
  t.equal(quoteString("a'b\\c"), "'a\\'b\\\\c'");
  t.equal(quoteString('x\ny\tz\0'), "'x\\ny\\tz\\0'");
  t.equal(literal(7, 'n'), '7');
  t.equal(literal(12345678901234567890n, 'n'), '12345678901234567890');
  t.equal(literal(['a', 1], 'a'), "['a', 1]");
  t.equal(literal(new Date(1_700_000_000_123), 'd'), "'1700000000.123'");
  t.equal(literal(new Date(0), 'd'), "'0000000000'", 'ten digits: a short number is not read as a timestamp');
  t.equal(literal(new Date(5_007), 'd'), "'0000000005.007'");
  t.throws(() => literal(new Date(-1), 'd'), /before 1970/);
  t.equal(inlineParams('SELECT {a:UInt64}, {b:String}', { a: 1, b: 'x' }), "SELECT CAST(1 AS UInt64), CAST('x' AS String)");
  t.throws(() => inlineParams('SELECT {a:UInt64}', {}), /a has no value/);
  t.throws(() => literal(Number.NaN, 'n'), /not a finite number/);
  t.throws(() => literal(null, 'n'), /unsupported value null/);
  t.throws(() => literal({}, 'n'), /unsupported value object/);
  t.throws(() => literal(new Date(Number.NaN), 'd'), /invalid date/);
});

t.test('embedded ClickHouse: values reach the engine unchanged, in parallel, on every connection', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ch-literals-'));
  const ch = await openClickHouse({ dataDir: dir, connections: 3 });
  t.teardown(async () => {
    await ch.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const nasty = ["a'b", "a\\'b", '\\', "'; DROP TABLE logs; --", '{x:String}', 'line\nbreak\ttab\0nul\r', 'ünï €', "\\'", ''];
  for (const s of nasty) {
    const [row] = await ch.query<{ s: string; a: string[]; n: number; t: string }>(
      "SELECT {s:String} AS s, {a:Array(String)} AS a, {n:Int64} AS n, toString({t:DateTime64(3, 'UTC')}) AS t",
      { s, a: [s, 'x'], n: -42, t: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)) },
    );
    t.same(row, { s, a: [s, 'x'], n: -42, t: '2026-01-02 03:04:05.678' }, JSON.stringify(s));
  }

  // The epoch and the end of log time reach both column types unchanged (GET /admin/logs?since=0 was a 500).
  for (const [ms, text] of [[0, '1970-01-01 00:00:00.000'], [4_102_444_800_000, '2100-01-01 00:00:00.000']] as const) {
    const [row] = await ch.query<{ t: string; d: string }>(
      "SELECT toString({t:DateTime64(3, 'UTC')}) AS t, toString({d:DateTime('UTC')}) AS d",
      { t: new Date(ms), d: new Date(ms) },
    );
    t.same(row, { t: text, d: text.slice(0, 19) }, text);
  }

  // Many at once over the connections: each answer carries its own values (nothing shared between connections).
  await ch.command('CREATE TABLE kv (k UInt32, v String) ENGINE = MergeTree ORDER BY k');
  await ch.insert('kv', Array.from({ length: 100 }, (_, k) => JSON.stringify({ k, v: `v${k}` })).join('\n'));
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => ch.query<{ v: string }>('SELECT v FROM kv WHERE k = {k:UInt32}', { k: i % 100 })),
  );
  t.same(answers.map((rows) => rows[0]?.v), Array.from({ length: 60 }, (_, i) => `v${i % 100}`), 'unqualified table on every connection');

  await t.rejects(ch.query('SELECT {missing:UInt8}', {}), /Substitution|missing|not set/i);
  await t.rejects(ch.query('SELECT {a:UInt8}', { b: 1 }), /a has no value/);
  await t.rejects(ch.query("SELECT {s:UInt8}", { s: "1; DROP TABLE kv" }), /Cannot parse|CANNOT_PARSE|Code: 6\b|Code: 72/, 'a value is never SQL');
  t.equal((await ch.query<{ n: number }>('SELECT count() AS n FROM kv'))[0]!.n, 100, 'the table is still there');
});
