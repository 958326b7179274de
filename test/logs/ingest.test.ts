import t from 'tap';
import { adminToken, eventually, startTestService } from '../helpers/harness.js';
import { LOG_COLUMNS } from '../../src/storage/clickhouse/logs-table.js';

const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '50' } });
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const flush = () => svc.service.system.ask('logs', 'flush');
const ch = svc.service.context.clickhouse;

const record = (over: Record<string, unknown> = {}) => ({
  key_id: 11,
  master_id: 7,
  group: 'openai-main',
  model: 'gpt-4o',
  status_code: 200,
  latency_ms: 120,
  tokens_in: 10,
  tokens_out: 20,
  request_size: 300,
  response_size: 900,
  client_ip: '10.1.2.3',
  error_message: '',
  audit_reason: '',
  request_body: '{"messages":[]}',
  response_body: '{"choices":[]}',
  ...over,
});

const rawCount = async () => Number((await ch.query<{ n: number }>('SELECT count() AS n FROM logs'))[0]!.n);

t.test('one record: 202 with its id, stored with every field, request body kept', async (t) => {
  const r = await svc.request('POST', '/logs', { body: record() });
  t.equal(r.status, 202);
  t.equal(r.json.accepted, 1);
  t.ok(Number.isSafeInteger(r.json.id) && r.json.id > 0, 'a JSON-safe integer id');
  await flush();
  const list = await svc.request('GET', `/admin/logs?key_id=11`, admin);
  t.equal(list.status, 200);
  t.equal(list.json.total, 1);
  const item = list.json.items[0];
  t.match(item, { ...record(), id: r.json.id, deletedAt: { time: null, valid: false } });
  t.match(item.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.ok(Math.abs(Date.parse(item.createdAt) - Date.now()) < 60_000, 'createdAt is the ingestion time');
});

t.test('batches: a JSON array and NDJSON answer 202 with the count', async (t) => {
  const arr = await svc.request('POST', '/logs', { body: [record({ key_id: 21 }), record({ key_id: 21 }), record({ key_id: 21 })] });
  t.equal(arr.status, 202);
  t.same(arr.json, { accepted: 3 });
  const nd = [record({ key_id: 22 }), record({ key_id: 22 })].map((r) => JSON.stringify(r)).join('\n') + '\n';
  const ndr = await svc.request('POST', '/logs', { rawBody: nd, headers: { 'content-type': 'application/x-ndjson' } });
  t.equal(ndr.status, 202);
  t.same(ndr.json, { accepted: 2 });
  await flush();
  t.equal((await svc.request('GET', '/admin/logs?key_id=21', admin)).json.total, 3);
  t.equal((await svc.request('GET', '/admin/logs?key_id=22', admin)).json.total, 2);
});

t.test('bad records: 400 naming the fields; in a batch, each bad index, and none of the batch is stored', async (t) => {
  const before = await rawCount();
  const one = await svc.request('POST', '/logs', { body: { key_id: -1, master_id: 'x' } });
  t.equal(one.status, 400);
  t.equal(one.json.code, 'bad_request');
  t.ok(one.json.data.key_id);
  t.ok(one.json.data.master_id);
  t.ok(one.json.data.status_code, 'missing status_code named');
  const batch = await svc.request('POST', '/logs', { body: [record(), record({ tokens_in: -5 }), record(), { key_id: 1 }] });
  t.equal(batch.status, 400);
  t.same(Object.keys(batch.json.data.records), ['1', '3']);
  t.ok(batch.json.data.records['1'].tokens_in);
  const nd = `${JSON.stringify(record())}\n{"key_id":\n`;
  const badNd = await svc.request('POST', '/logs', { rawBody: nd, headers: { 'content-type': 'application/x-ndjson' } });
  t.equal(badNd.status, 400);
  t.equal(badNd.json.data.line, 2);
  for (const rawBody of ['{"key_id": 1', '[]', 'null', '"text"']) {
    const r = await svc.request('POST', '/logs', { rawBody, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, rawBody);
  }
  t.equal((await svc.request('POST', '/logs', { body: record({ createdAt: 'yesterday' }) })).status, 400);
  t.equal((await svc.request('POST', '/logs', { body: record({ client_ip: 'x'.repeat(100) }) })).status, 400, 'oversized string');
  await flush();
  t.equal(await rawCount(), before, 'nothing from the rejected requests was stored');
});

t.test('body size limits: a single record over 4 MiB is 413; a batch may use 16 MiB', async (t) => {
  const big = 'b'.repeat(4 * 1024 * 1024 + 100);
  const single = await svc.request('POST', '/logs', { body: record({ request_body: big }) });
  t.equal(single.status, 413);
  t.equal(single.json.code, 'payload_too_large');
  const batch = await svc.request('POST', '/logs', { body: [record({ key_id: 31, request_body: big })] });
  t.equal(batch.status, 202);
  const tooBig = await svc.request('POST', '/logs', { body: [record({ request_body: 'c'.repeat(16 * 1024 * 1024) })] });
  t.equal(tooBig.status, 413);
});

t.test('ids are unique, increasing and JSON-safe; a record may carry its own createdAt', async (t) => {
  const ids: number[] = [];
  for (let i = 0; i < 20; i++) ids.push((await svc.request('POST', '/logs', { body: record({ key_id: 41 }) })).json.id);
  t.equal(new Set(ids).size, 20);
  t.same([...ids].sort((a, b) => a - b), ids, 'in time order');
  t.ok(ids.every((id) => id < 2 ** 53));
  const at = '2026-01-02T03:04:05.678Z';
  await svc.request('POST', '/logs', { body: record({ key_id: 42, createdAt: at }) });
  await flush();
  const got = await svc.request('GET', '/admin/logs?key_id=42', admin);
  t.equal(got.json.items[0].createdAt, at);
});

t.test('the row: declared fields only, absent ones as their defaults, updatedAt equal to createdAt', async (t) => {
  // Names of row-only columns and unknown fields: none of them reaches the table.
  const sneaky = { id: 5, created_at: '2020-01-01 00:00:00.000', updated_at: '2020-01-01 00:00:00.000', updatedAt: '2020-01-01T00:00:00Z', deletedAt: 'x', extra: { a: 1 } };
  const full = await svc.request('POST', '/logs', { body: record({ key_id: 61, ...sneaky }) });
  const bare = await svc.request('POST', '/logs', { body: { key_id: 62, master_id: 7, status_code: 204, ...sneaky } });
  const at = '2026-01-02T03:04:05.678Z';
  const dated = await svc.request('POST', '/logs', { body: { key_id: 63, master_id: 7, status_code: 200, createdAt: at, updated_at: '2020-01-01 00:00:00.000' } });
  t.same([full.status, bare.status, dated.status], [202, 202, 202]);
  await flush();
  const rows = await ch.query<Record<string, unknown>>(
    "SELECT *, toString(created_at) AS c, toString(updated_at) AS u FROM logs WHERE key_id IN (61, 62, 63) ORDER BY key_id",
  );
  t.equal(rows.length, 3);
  const [f, b, d] = rows as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
  t.match(f, { ...record({ key_id: 61 }), id: full.json.id });
  t.same(
    { ...b, created_at: undefined, updated_at: undefined, c: undefined, u: undefined },
    {
      id: bare.json.id, key_id: 62, master_id: 7, group: '', model: '', status_code: 204, latency_ms: 0, tokens_in: 0, tokens_out: 0,
      request_size: 0, response_size: 0, cost: 0, unpriced: 1, client_ip: '', error_message: '', audit_reason: '', request_body: '', response_body: '',
      created_at: undefined, updated_at: undefined, c: undefined, u: undefined,
    },
    'absent fields are the column defaults (no model: cost 0, unpriced); unknown fields are not stored',
  );
  for (const r of rows) t.equal(r.u, r.c, 'updated_at is created_at');
  t.ok(Math.abs(Date.parse(`${String(f.c).replace(' ', 'T')}Z`) - Date.now()) < 60_000, 'the ingestion time, not the sent created_at');
  t.equal(d.c, '2026-01-02 03:04:05.678', 'createdAt from the client is honoured');
  const item = (await svc.request('GET', '/admin/logs?key_id=63', admin)).json.items[0];
  t.equal(item.createdAt, at);
  t.equal(item.updatedAt, at);
});

t.test('LOG_COLUMNS are the columns of the logs table, but updated_at (its DEFAULT is created_at)', async (t) => {
  const cols = await ch.query<{ name: string; default_expression: string }>(
    "SELECT name, default_expression FROM system.columns WHERE database = currentDatabase() AND table = 'logs' ORDER BY position",
  );
  t.same(
    cols.map((c) => c.name).filter((n) => n !== 'updated_at'),
    [...LOG_COLUMNS],
  );
  t.equal(cols.find((c) => c.name === 'updated_at')?.default_expression, 'created_at');
});

t.test('request bodies are dropped while log_request_body_enabled is false', async (t) => {
  const put = await svc.request('PUT', '/admin/features', { ...admin, body: { log_request_body_enabled: false } });
  t.equal(put.status, 200);
  const applied = await eventually(async () => {
    const s = await svc.service.system.ask<{ flags: { log_request_body_enabled: boolean } }>('logs', 'state');
    return s.flags.log_request_body_enabled === false;
  }, 7000);
  t.ok(applied, 'the ingestion path saw the flag');
  await svc.request('POST', '/logs', { body: record({ key_id: 51, request_body: 'secret prompt', response_body: 'answer' }) });
  await flush();
  const item = (await svc.request('GET', '/admin/logs?key_id=51', admin)).json.items[0];
  t.equal(item.request_body, '');
  t.equal(item.response_body, 'answer', 'only the request body is governed by the flag');
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_request_body_enabled: true } });
});

t.test('queries: filters, newest first, exact totals, limit and offset', async (t) => {
  const base = Math.floor(Date.now() / 1000) - 3600;
  const at = (s: number) => new Date((base + s) * 1000).toISOString();
  const rows = [
    record({ master_id: 900, key_id: 901, model: 'a', group: 'g1', status_code: 200, createdAt: at(10) }),
    record({ master_id: 900, key_id: 901, model: 'b', group: 'g1', status_code: 429, createdAt: at(20) }),
    record({ master_id: 900, key_id: 902, model: 'a', group: 'g2', status_code: 200, error_message: 'upstream reset', createdAt: at(30) }),
    record({ master_id: 900, key_id: 902, model: 'b', group: 'g2', status_code: 500, createdAt: at(40) }),
    record({ master_id: 901, key_id: 903, model: 'a', group: 'g1', status_code: 200, createdAt: at(50) }),
  ];
  t.equal((await svc.request('POST', '/logs', { body: rows })).status, 202);
  await flush();
  const q = async (qs: string) => (await svc.request('GET', `/admin/logs?${qs}`, admin)).json;
  const all = await q('master_id=900');
  t.equal(all.total, 4);
  t.same(all.items.map((i: { createdAt: string }) => i.createdAt), [at(40), at(30), at(20), at(10)], 'newest first');
  t.equal((await q('master_id=900&key_id=902')).total, 2);
  t.equal((await q('master_id=900&model=b')).total, 2);
  t.equal((await q('master_id=900&group=g2')).total, 2);
  t.equal((await q('master_id=900&status_code=429')).total, 1);
  t.equal((await q('master_id=900&error_only=true')).total, 3, 'status >= 400 or an error message');
  t.equal((await q(`master_id=900&since=${base + 20}&until=${base + 40}`)).total, 2, 'since inclusive, until exclusive');
  const page = await q('master_id=900&limit=2&offset=1');
  t.equal(page.total, 4, 'total ignores the page');
  t.equal(page.limit, 2);
  t.equal(page.offset, 1);
  t.same(page.items.map((i: { createdAt: string }) => i.createdAt), [at(30), at(20)]);
  t.equal((await q('limit=5000')).limit, 200, 'limit clamped to 200');
  for (const bad of ['limit=0', 'offset=-1', 'key_id=abc', 'since=x', `since=${base + 40}&until=${base}`, 'error_only=maybe']) {
    const r = await svc.request('GET', `/admin/logs?${bad}`, admin);
    t.equal(r.status, 400, bad);
  }
  t.equal((await svc.request('GET', '/admin/logs')).status, 401);
});

t.test('deletion by condition: before is required; rollups agree with the raw table afterwards', async (t) => {
  t.equal((await svc.request('DELETE', '/admin/logs', admin)).status, 400);
  t.equal((await svc.request('DELETE', '/admin/logs?before=yesterday', admin)).status, 400);
  const base = Date.UTC(2026, 5, 1, 12, 0, 0);
  const rows = [0, 1, 2, 3, 4, 5].map((i) =>
    record({ master_id: 1000 + (i % 2), key_id: 2000 + i, status_code: i === 5 ? 500 : 200, latency_ms: 100 * (i + 1), createdAt: new Date(base + i * 60_000).toISOString() }),
  );
  await svc.request('POST', '/logs', { body: rows });
  await flush();
  const del = await svc.request('DELETE', `/admin/logs?before=${new Date(base + 3 * 60_000 + 30_000).toISOString()}&master_id=1000`, admin);
  t.equal(del.status, 200);
  t.same(del.json, { deleted: 2 }, 'minutes 0 and 2 of master 1000');
  const left = (await svc.request('GET', '/admin/logs?master_id=1000', admin)).json;
  t.equal(left.total, 1);
  t.equal(left.items[0].key_id, 2004);
  for (const table of ['logs_minute', 'logs_hourly', 'logs_model_grains WHERE grain = 3600', 'logs_total_grains WHERE grain = 1']) {
    const [fromRollup] = await ch.query<{ r: number; lat: number }>(`SELECT sum(requests) AS r, sum(latency_sum) AS lat FROM ${table}`);
    const [fromRaw] = await ch.query<{ r: number; lat: number }>('SELECT count() AS r, sum(latency_ms) AS lat FROM logs');
    t.same(fromRollup, fromRaw, `${table} agrees with logs`);
  }
});
