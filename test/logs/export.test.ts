import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';
import { csvRecords } from '../helpers/csv.js';

const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '50' } });
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const flush = () => svc.service.system.ask('logs', 'flush');
const ch = svc.service.context.clickhouse;

const newMaster = async (name: string) => {
  const r = await svc.request('POST', '/admin/masters', { ...admin, body: { name, group: 'default' } });
  return { id: r.json.id as number, key: r.json.master_key as string };
};
const m1 = await newMaster('export-one');
const m2 = await newMaster('export-two');

const base = Date.parse('2026-03-10T00:00:00.000Z');
const at = (ms: number) => new Date(base + ms).toISOString();
/** 60 records over two days: two masters, three keys each, three models, two groups, 2xx/4xx/5xx, awkward text. */
const records = Array.from({ length: 60 }, (_, i) => {
  const master = i % 3 === 0 ? m2.id : m1.id;
  return {
    master_id: master,
    key_id: master * 100 + (i % 3),
    model: ['gpt-4o', 'claude-3', 'llama'][i % 3 === 1 ? 1 : i % 5 === 0 ? 2 : 0],
    group: i % 2 ? 'g-odd' : 'g-even',
    status_code: i % 7 === 0 ? 500 : i % 4 === 0 ? 429 : 200,
    latency_ms: 10 + i,
    tokens_in: i,
    tokens_out: 2 * i,
    error_message: i % 7 === 0 ? `upstream said "no", then,\nit hung up #${i}` : '',
    request_body: JSON.stringify({ n: i, text: 'a, "quoted"\nline' }),
    createdAt: at(i * 47 * 60_000 + i * 1_013), // every ~47 minutes, off the minute
  };
});
const posted = await svc.request('POST', '/logs', { body: records });
if (posted.status !== 202) throw new Error(`POST /logs: ${posted.status} ${posted.text}`);
await flush();

const exportOf = async (path: string, token: string) => {
  const r = await svc.request('GET', path, { token });
  return { ...r, ...csvRecords(r.text) };
};

t.test('admin export: rows equal the list total for every filter combination, same records, newest first', async (t) => {
  const windows = `since=${(base + 3 * 3600_000) / 1000 + 17}&until=${(base + 30 * 3600_000) / 1000 + 5}`;
  const combos = [
    '', `master_id=${m1.id}`, 'model=gpt-4o', 'status_code=500', 'error_only=true', windows, `key_id=${m2.id * 100}&model=gpt-4o`,
    'group=g-odd&error_only=true', `${windows}&master_id=${m2.id}&group=g-even`, 'model=nothing-like-this',
  ];
  for (const q of combos) {
    const list = await svc.request('GET', `/admin/logs?limit=200&${q}`, admin);
    t.equal(list.status, 200, q);
    const out = await exportOf(`/admin/logs/export?${q}`, adminToken);
    t.equal(out.status, 200, q);
    t.equal(out.records.length, list.json.total, `rows == total for "${q}" (${list.json.total})`);
    t.same(out.records.map((r) => Number(r.id)), list.json.items.map((i: { id: number }) => i.id), `same records in the same order for "${q}"`);
  }
  t.ok(combos.length >= 8);
});

t.test('the CSV: headers, columns, quoting of commas, quotes and newlines, UTC times', async (t) => {
  const out = await exportOf('/admin/logs/export?status_code=500', adminToken);
  t.match(out.headers.get('content-type'), /^text\/csv/);
  t.match(out.headers.get('content-disposition'), /^attachment; filename="logs-\d{8}T\d{6}Z\.csv"$/);
  t.ok(out.headers.get('x-request-id'));
  t.same(out.header, [
    'id', 'created_at', 'master_id', 'key_id', 'group', 'model', 'status_code', 'latency_ms', 'tokens_in', 'tokens_out', 'request_size',
    'response_size', 'cost', 'unpriced', 'client_ip', 'error_message', 'audit_reason', 'request_body', 'response_body', 'updated_at',
  ]);
  const list = await svc.request('GET', '/admin/logs?status_code=500&limit=200', admin);
  t.ok(out.records.length > 0);
  for (const [i, item] of list.json.items.entries()) {
    const row = out.records[i]!;
    t.equal(row.error_message, item.error_message, 'error text survives the quoting');
    t.equal(row.request_body, item.request_body);
    t.equal(`${row.created_at.replace(' ', 'T')}Z`, item.createdAt, 'UTC time, same instant as the list');
    t.equal(Number(row.master_id), item.master_id);
  }
});

t.test('tenant export: own records only, whatever master_id it asks for', async (t) => {
  for (const q of ['', `master_id=${m2.id}`, 'model=gpt-4o', 'error_only=true']) {
    const own = await svc.request('GET', `/v1/logs?limit=200&${q}`, { token: m1.key });
    t.equal(own.status, 200);
    const out = await exportOf(`/v1/logs/export?${q}`, m1.key);
    t.equal(out.status, 200, q);
    t.equal(out.records.length, own.json.total, `rows == own total for "${q}"`);
    t.ok(out.records.every((r) => Number(r.master_id) === m1.id), 'no record of another master');
  }
  const theirs = await exportOf('/v1/logs/export', m2.key);
  t.ok(theirs.records.length > 0 && theirs.records.every((r) => Number(r.master_id) === m2.id));
  t.equal((await svc.request('GET', '/v1/logs/export', admin)).status, 401, 'the admin token is not a master key');
  t.equal((await svc.request('GET', '/admin/logs/export', { token: m1.key })).status, 401, 'a master key is not the admin token');
});

t.test('bad filters: 400 in the envelope before any byte of CSV', async (t) => {
  for (const q of ['since=100&until=50', 'key_id=-1', 'status_code=abc', 'error_only=maybe']) {
    const r = await svc.request('GET', `/admin/logs/export?${q}`, admin);
    t.equal(r.status, 400, q);
    t.equal(r.json.code, 'bad_request');
    t.match(r.headers.get('content-type'), /application\/json/);
  }
});

t.test('no row cap: a large export is streamed whole, and clients that leave early free the store', { timeout: 180_000 }, async (t) => {
  const rows = 60_000;
  await ch.command(
    `INSERT INTO logs (id, master_id, key_id, model, status_code, request_body, created_at)
     SELECT 10000000 + number, 999, 99900 + number % 7, 'bulk', 200, repeat('x', 200), toDateTime64('2026-01-05 00:00:00', 3, 'UTC') + number
     FROM numbers(${rows})`,
  );
  const list = await svc.request('GET', '/admin/logs?master_id=999&limit=1', admin);
  t.equal(list.json.total, rows);
  // Leave several exports after their first block: more than the store's streaming connections.
  for (let i = 0; i < 6; i++) {
    const ac = new AbortController();
    const res = await fetch(`${svc.base}/admin/logs/export?master_id=999`, { headers: { authorization: `Bearer ${adminToken}` }, signal: ac.signal });
    t.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await reader.read().catch(() => undefined);
  }
  // A slow reader: the service writes only as fast as it is read (backpressure), and the result is complete.
  const res = await fetch(`${svc.base}/admin/logs/export?master_id=999`, { headers: { authorization: `Bearer ${adminToken}` } });
  const reader = res.body!.getReader();
  let bytes = 0;
  let newlines = 0;
  let slow = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    for (const b of value) if (b === 0x0a) newlines++;
    if (slow++ < 20) await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(newlines, rows + 1, 'header plus every row (no field holds a newline here)');
  t.ok(bytes > rows * 200);
  const after = await svc.request('GET', '/admin/logs/export?master_id=999&key_id=99903', admin);
  t.equal(csvRecords(after.text).records.length, (await svc.request('GET', '/admin/logs?master_id=999&key_id=99903&limit=1', admin)).json.total);
  t.equal((await svc.request('GET', '/health', {})).status, 200);
});

t.test('OpenAPI documents both exports as text/csv with the list filters', async (t) => {
  const doc = (await svc.request('GET', '/swagger/doc.json', {})).json;
  for (const p of ['/admin/logs/export', '/v1/logs/export']) {
    const op = doc.paths[p].get;
    t.ok(op.responses['200'].content['text/csv; charset=utf-8'], p);
    const names = op.parameters.map((x: { name: string }) => x.name).sort();
    t.same(names, ['error_only', 'group', 'key_id', 'master_id', 'model', 'since', 'status_code', 'until'], `${p} takes the list filters`);
  }
});
