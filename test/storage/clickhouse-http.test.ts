/**
 * The HTTP transport (@clickhouse/client) against ClickHouse's HTTP interface
 * as the bridge serves it from the embedded engine: what the client sends
 * (parameters bound by the engine from their text, settings, database, the
 * query in the URL or the body) and what a server answers (rows, 64-bit
 * integers as numbers, errors with their codes and statuses, streamed bodies,
 * compression). The service-level files run over the same bridge in CI
 * (SVC_TEST_CLICKHOUSE=bridge, .ci/run).
 */
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@clickhouse/client';
import { HttpClickHouse } from '../../src/storage/clickhouse/http-transport.js';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';
import { classifyInsertError } from '../../src/storage/clickhouse/write/errors.js';
import { spawnClickHouseBridge } from '../helpers/clickhouse-bridge.js';

t.setTimeout(600_000); // streams of 150,000 rows, on a machine shared with other suites
const bridge = await spawnClickHouseBridge(mkdtempSync(join(tmpdir(), 'ch-http-')), { removeDataDir: true });
t.teardown(() => bridge.close());
const url = await bridge.database('gateway');
const ch = new HttpClickHouse({ url });
t.teardown(() => ch.close());

const text = async (it: AsyncIterable<Uint8Array>): Promise<string> => {
  const parts: Buffer[] = [];
  for await (const c of it) parts.push(Buffer.from(c));
  return Buffer.concat(parts).toString();
};

t.test('a command may run longer than a read may wait: its own timeout', async (t) => {
  const short = new HttpClickHouse({ url, requestTimeoutMs: 500 });
  t.teardown(() => short.close());
  // sleep() holds the answer back for 1.5 s: longer than a read waits here, shorter than a command does.
  const slow = 'SELECT sleep(1.5) FORMAT Null';
  await t.rejects(short.query('SELECT sleep(1.5) AS s'), { status: 503, code: 'unavailable' }, 'a read silent past its timeout is the 503');
  await t.resolves(short.command(slow), 'a command waits for its statement');
  const both = new HttpClickHouse({ url, requestTimeoutMs: 500, commandTimeoutMs: 500 });
  t.teardown(() => both.close());
  await t.rejects(both.command(slow), { status: 503, code: 'unavailable' }, 'and gives up past its own limit');
  // The setting's way in (SVC_CLICKHOUSE_COMMAND_TIMEOUT_MS → openClickHouse).
  const opened = await openClickHouse({ url, dataDir: '', commandTimeoutMs: 500 });
  t.teardown(() => opened.close());
  await t.rejects(opened.command(slow), { status: 503, code: 'unavailable' }, 'openClickHouse passes the command limit on');
});

t.test('queries: parameters bound from their text, 64-bit integers as numbers, the URL database', async (t) => {
  t.equal(await ch.ping(), true);
  const at = new Date('2024-01-02T03:04:05.678Z');
  const rows = await ch.query<Record<string, unknown>>(
    "SELECT {s:String} AS s, {d:DateTime64(3, 'UTC')} AS d, {a:Array(String)} AS a, {n:UInt64} AS n, toUInt64(9007199254740991) AS big, currentDatabase() AS db",
    { s: "it's \\ a\ttab\nline", d: at, a: ["x'y", 'z'], n: 12345678901 },
  );
  t.same(rows, [{ s: "it's \\ a\ttab\nline", d: '2024-01-02 03:04:05.678', a: ["x'y", 'z'], n: 12345678901, big: 9007199254740991, db: 'gateway' }]);
  await t.rejects(ch.query('SELECT {n:UInt8} AS n', { n: 'abc' }), { code: '457' }, "text the type cannot parse is the server's BAD_QUERY_PARAMETER");
});

t.test('commands and inserts: NDJSON and compact rows as sent, unknown fields skipped, defaults filled', async (t) => {
  await ch.command("CREATE TABLE kv (id UInt64, `group` String DEFAULT 'none', at DateTime('UTC')) ENGINE = MergeTree ORDER BY id");
  await ch.insert('kv', Buffer.from('{"id":1,"group":"g","at":"2024-03-01T10:00:00Z","extra":true}\n{"id":2,"at":"2024-03-01 11:00:00"}\n'));
  await ch.insert('kv', Buffer.from('[3,"h"]\n'), { format: 'JSONCompactEachRow', columns: ['id', 'group'] });
  t.same(await ch.query("SELECT id, `group`, toString(at) AS at FROM kv ORDER BY id"), [
    { id: 1, group: 'g', at: '2024-03-01 10:00:00' },
    { id: 2, group: 'none', at: '2024-03-01 11:00:00' },
    { id: 3, group: 'h', at: '1970-01-01 00:00:00' },
  ]);
  await ch.command('DELETE FROM kv WHERE id = {id:UInt64}', { id: 2 });
  t.same(await ch.query('SELECT id FROM kv ORDER BY id'), [{ id: 1 }, { id: 3 }]);
});

t.test("errors carry the server's code, so the insert classifier sees real codes", async (t) => {
  const bad = await ch.insert('kv', Buffer.from('{"id":"x"}\n')).catch((e: unknown) => e);
  const refusal = classifyInsertError(bad);
  t.equal(refusal.kind, 'refusal', refusal.message);
  t.type(refusal.code, 'number');
  const missing = await ch.insert('no_such_table', Buffer.from('{"id":1}\n')).catch((e: unknown) => e);
  t.match(classifyInsertError(missing), { kind: 'outage', code: 60 }, 'a missing table is an outage');
  await t.rejects(ch.query('SELECT nope'), { code: '47', type: 'UNKNOWN_IDENTIFIER' });
  await t.rejects(ch.command('CREAT TABLE x'), { code: '62' });

  // The raw answer, as a server gives it: status by code, the code in a header, the text with the version.
  const res = await fetch(`${bridge.url}/?database=gateway`, { method: 'POST', body: 'SELECT nope' });
  t.equal(res.status, 404);
  t.equal(res.headers.get('x-clickhouse-exception-code'), '47');
  t.match(await res.text(), /^Code: 47\. DB::Exception: .*\(UNKNOWN_IDENTIFIER\) \(version \d+\.\d+/s);
  const syntax = await fetch(`${bridge.url}/`, { method: 'POST', body: 'SELEC 1' });
  t.equal(syntax.status, 400);
  const readonly = await fetch(`${bridge.url}/?query=${encodeURIComponent('DROP TABLE gateway.kv')}`);
  t.equal(readonly.status, 500, 'GET is read-only, as on a server');
  t.equal(readonly.headers.get('x-clickhouse-exception-code'), '164');
  t.same(await ch.query('SELECT count() AS n FROM kv'), [{ n: 2 }], 'and the table is still there');
});

t.test('headers, settings per request, query ids, compression both ways', async (t) => {
  const res = await fetch(`${bridge.url}/?database=gateway&query_id=q-1&default_format=JSONEachRow&output_format_json_quote_64bit_integers=1`, {
    method: 'POST',
    body: 'SELECT toUInt64(5) AS n',
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-clickhouse-query-id'), 'q-1');
  t.equal(res.headers.get('x-clickhouse-format'), 'JSONEachRow');
  t.match(JSON.parse(res.headers.get('x-clickhouse-summary') ?? '{}'), { read_rows: String });
  t.equal(await res.text(), '{"n":"5"}\n', 'a setting in the URL applies to that request');
  t.same(await ch.query('SELECT toUInt64(5) AS n'), [{ n: 5 }], 'and not to the next one');

  const gz = await fetch(`${bridge.url}/?enable_http_compression=1`, {
    method: 'POST',
    body: gzipSync('SELECT 42 FORMAT TSV'),
    headers: { 'content-encoding': 'gzip', 'accept-encoding': 'gzip' },
  });
  t.equal(gz.headers.get('content-encoding'), 'gzip');
  t.equal(await gz.text(), '42\n', 'inflated by fetch');

  // The client with compression on both ways and parameters too long for the URL (a multipart body).
  const client = createClient({ url, compression: { request: true, response: true }, use_multipart_params: true });
  t.teardown(() => client.close());
  const long = 'x'.repeat(10_000);
  const rs = await client.query({ query: 'SELECT length({s:String}) AS n', query_params: { s: long }, format: 'JSONEachRow' });
  t.same(await rs.json(), [{ n: '10000' }]);
  await client.insert({ table: 'kv', values: [{ id: 9, group: 'z' }], format: 'JSONEachRow' });
  t.same(await ch.query('SELECT `group` FROM kv WHERE id = 9'), [{ group: 'z' }]);
});

t.test('streamed SELECTs: every row once, one header, early exits hang up, a bad query rejects', async (t) => {
  await ch.command('CREATE TABLE big (n UInt64, s String) ENGINE = MergeTree ORDER BY n');
  for (let i = 0; i < 3; i++) await ch.command(`INSERT INTO big SELECT number + ${i * 50_000}, concat('v,"', toString(number), '"') FROM numbers(50000)`);
  const csv = await text(await ch.stream('SELECT n, s FROM big WHERE n >= {from:UInt64} ORDER BY n DESC', { from: 1000 }, 'CSVWithNames'));
  const lines = csv.trimEnd().split('\n');
  t.equal(lines[0], '"n","s"');
  t.equal(lines.filter((l) => l === '"n","s"').length, 1, 'the header once');
  t.equal(lines.length, 1 + 150_000 - 1000);
  t.equal(lines[1], '149999,"v,""49999"""');
  t.equal(await text(await ch.stream('SELECT n FROM big WHERE n > 1e9', {}, 'CSVWithNames')), '"n"\n', 'an empty result is its header');

  // More early exits than the bridge has connections: each one is given back.
  for (let i = 0; i < 12; i++) {
    const it = await ch.stream('SELECT n, s FROM big ORDER BY n', {}, 'CSV');
    t.notOk((await it.next()).done);
    await it.return!();
  }
  t.same(await ch.query('SELECT count() AS c FROM big'), [{ c: 150_000 }], 'and queries still run');
  await t.rejects(ch.stream('SELECT nope FROM big', {}, 'CSV'), /nope/, 'a bad query rejects before any byte');

  // An error after the first block: a server writes it into the body; the transport throws it instead of giving it.
  // Whether the engine has sent a first block before it fails is its timing: the error may also come before any
  // byte (then stream() itself rejects). Either way it is thrown with its code, never given as rows.
  const given: Buffer[] = [];
  const err = await (async () => {
    const failing = await ch.stream("SELECT n, throwIf(n = 120000, 'boom at the end') AS x FROM big SETTINGS max_threads = 1", {}, 'CSV');
    for await (const c of failing) given.push(Buffer.from(c));
  })().catch((e: unknown) => e);
  t.match(err, { code: '395', message: /boom at the end/ }, 'the error, with its code');
  const got = Buffer.concat(given).toString();
  t.notMatch(got, /__exception__|boom/, 'none of the exception block among the rows');
  if (got.length > 0) t.match(got, /^0,0\n1,0\n/, 'the blocks before it, in order');
});

t.test('on the wire: values travel as parameters (never SQL), settings and database in the URL, insert bytes untouched', async (t) => {
  // A recording proxy in front of the bridge: what the transport sends, and that the engine takes it.
  const seen: Array<{ url: URL; body: string }> = [];
  const target = new URL(bridge.url);
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ url: new URL(req.url ?? '/', 'http://x'), body: body.toString() });
      const up = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
  const via = new HttpClickHouse({ url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, database: 'gateway' });
  t.teardown(() => via.close());

  const at = new Date('2024-01-02T03:04:05.678Z');
  t.same(await via.query("SELECT {s:String} AS s, toString({d:DateTime64(3, 'UTC')}) AS d", { s: "it's", d: at }), [{ s: "it's", d: '2024-01-02 03:04:05.678' }]);
  let q = seen.at(-1)!;
  t.match(q.body, /^SELECT \{s:String\} AS s, toString\(\{d:DateTime64\(3, 'UTC'\)\}\) AS d\s+FORMAT JSONEachRow\s*$/);
  t.equal(q.url.searchParams.get('param_s'), "it\\'s", 'values travel (escaped) as parameters, not SQL');
  t.equal(q.url.searchParams.get('param_d'), '1704164645.678', 'a Date is an exact Unix timestamp');
  t.equal(q.url.searchParams.get('output_format_json_quote_64bit_integers'), '0');
  t.equal(q.url.searchParams.get('database'), 'gateway');

  await via.command('DELETE FROM kv WHERE id = {id:UInt64}', { id: 3 });
  q = seen.at(-1)!;
  t.equal(q.body, 'DELETE FROM kv WHERE id = {id:UInt64}');
  t.equal(q.url.searchParams.get('param_id'), '3');

  const ndjson = Buffer.from('{"id":21}\n{"id":22}\n');
  await via.insert('kv', ndjson);
  q = seen.at(-1)!;
  t.equal(q.url.searchParams.get('query'), 'INSERT INTO kv FORMAT JSONEachRow');
  t.equal(q.body, ndjson.toString(), 'NDJSON bytes are sent as they are');
  t.equal(q.url.searchParams.get('input_format_skip_unknown_fields'), '1');
  t.equal(q.url.searchParams.get('date_time_input_format'), 'best_effort');
  t.equal(q.url.searchParams.get('max_partitions_per_insert_block'), '100');

  const rows = Buffer.from('[23,"g"]\n');
  await via.insert('kv', rows, { format: 'JSONCompactEachRow', columns: ['id', 'group'] });
  q = seen.at(-1)!;
  t.equal(q.url.searchParams.get('query'), 'INSERT INTO kv (`id`, `group`) FORMAT JSONCompactEachRow', 'the column list, quoted');
  t.equal(q.body, rows.toString(), 'compact rows are sent as they are');
  t.same(await ch.query('SELECT id, `group` FROM kv WHERE id > 20 ORDER BY id'), [{ id: 21, group: 'none' }, { id: 22, group: 'none' }, { id: 23, group: 'g' }]);

  const calls = seen.length;
  await t.rejects(via.insert('kv', rows, { format: 'JSONCompactEachRow' }), /needs its column list/);
  await t.rejects(via.insert('kv', rows, { format: 'JSONCompactEachRow', columns: ['id`'] }), /invalid ClickHouse column name/);
  t.equal(seen.length, calls, 'a bad insert never reaches the server');
});
