/**
 * The log pipeline under refusals and outages, through the running service
 * and the real embedded engine: a poisoned spool file at start, records
 * spread over more than 100 UTC days, rows ClickHouse refuses (crafted at the
 * storage layer: the HTTP path lets no such record through), an outage, and
 * the admin endpoints, /health and /metrics that show them.
 */
import t, { type Test } from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminToken, freshDatabase, internalToken, postgresAvailable, startTestService, type TestService } from '../helpers/harness.js';
import type { ClickHouse } from '../../src/storage/clickhouse/client.js';
import { LOG_COLUMNS, toRow } from '../../src/storage/clickhouse/logs-table.js';

const admin = { token: adminToken };
const LONE_SURROGATE = '"\\ud800"';
const record = (i: number, over: Record<string, unknown> = {}) => ({ key_id: 5, master_id: 3, status_code: 200, model: 'm', tokens_in: i, ...over });
const flush = (svc: TestService) => svc.service.system.ask('logs', 'flush');
const stored = async (ch: ClickHouse, where = '1') => Number((await ch.query<{ n: number }>(`SELECT count() AS n FROM logs WHERE ${where}`))[0]!.n);
const metric = async (svc: TestService, series: string): Promise<number | undefined> => {
  const text = (await svc.request('GET', '/metrics', { headers: { 'x-internal-token': internalToken } })).text;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : undefined;
};

/**
 * Rows whose model is `POISON` reach the real engine as a lone surrogate,
 * which it refuses (Code 25): a refusal crafted below the HTTP path, as a
 * record the validation let through would be. Undone by the returned function.
 */
function poisonInserts(ch: ClickHouse): () => void {
  const real = ch.insert.bind(ch);
  ch.insert = (table, rows, options) => real(table, Buffer.from(rows.toString().replaceAll('"POISON"', LONE_SURROGATE)), options);
  return () => {
    ch.insert = real;
  };
}

async function lastingStores(t: Test, prefix: string): Promise<{ dataDir: string; databaseUrl: string | undefined }> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const db = (await postgresAvailable()) ? await freshDatabase() : undefined;
  t.teardown(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { dataDir, databaseUrl: db?.url };
}

await t.test('a poisoned spool file at start: its good rows stored, the refused ones dead-lettered, start-up goes on', async (t) => {
  const { dataDir, databaseUrl } = await lastingStores(t, 'cp-poison-');
  const spool = join(dataDir, 'log-spool');
  mkdirSync(spool, { recursive: true });
  const line = (i: number, model = '"m"') => JSON.stringify(toRow(record(i), 5000 + i, '2026-11-20 10:00:00.000', true, { cost: '0.5', unpriced: false })).replace('"m"', model);
  const rows = [line(0), line(1, LONE_SURROGATE), line(2), line(3), '[1,2,3', line(4)];
  writeFileSync(join(spool, '000000000001-6.compact.ndjson'), `${JSON.stringify(LOG_COLUMNS)}\n${rows.join('\n')}\n`);
  writeFileSync(join(spool, '000000000002-1.compact.ndjson'), `not a column list\n${line(5)}\n`);
  writeFileSync(join(spool, '000000000003-1.compact.ndjson'), `${JSON.stringify(LOG_COLUMNS)}\n${line(6)}\n`);
  const svc = await startTestService({ dataDir, databaseUrl, keepData: true, env: { SVC_LOG_FLUSH_MS: '20' } });
  t.teardown(() => svc.stop());
  await flush(svc);
  const ch = svc.service.context.clickhouse;
  t.same(
    (await ch.query<{ tokens_in: number }>('SELECT tokens_in FROM logs ORDER BY tokens_in')).map((r) => r.tokens_in),
    [0, 2, 3, 4, 6],
    'the good rows of the poisoned file, and the file after it',
  );
  t.same(readdirSync(spool), [], 'the spool is empty: nothing replays again at the next start');
  const dl = await svc.request('GET', '/admin/logs/dead-letters', admin);
  t.equal(dl.status, 200);
  t.equal(dl.json.records, 4, 'two refused rows, and the unreadable file whole (its first line and its row)');
  t.same(dl.json.items.map((l: { code: unknown; records: number }) => [l.code, l.records]).sort(), [[25, 1], [27, 1], [null, 2]].sort());
  t.ok(dl.json.items.every((l: { message: string; at: string; sample: string[] }) => l.message && !Number.isNaN(Date.parse(l.at)) && l.sample.length >= 1));
  const health = await svc.request('GET', '/health');
  t.equal(health.status, 200, 'the node stays in service');
  t.match(health.json, { status: 'degraded', log_pipeline: 'degraded', clickhouse: 'up' });
  t.equal((await svc.request('POST', '/logs', { body: record(7) })).status, 202, 'ingestion goes on');
  await flush(svc);
  t.equal(await stored(ch), 6);
  for (const l of dl.json.items) t.equal((await svc.request('DELETE', `/admin/logs/dead-letters/${l.id}`, admin)).status, 200);
  t.equal((await svc.request('DELETE', `/admin/logs/dead-letters/${dl.json.items[0].id}`, admin)).status, 404);
  t.match((await svc.request('GET', '/health')).json, { status: 'ok', log_pipeline: 'ok' });
});

const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '200' } });
t.teardown(() => svc.stop());
const ch = svc.service.context.clickhouse;

t.test('records over more than 100 UTC days in one flush window are all stored', async (t) => {
  const refusals0 = (await metric(svc, 'log_insert_errors_total{kind="refusal"}')) ?? 0;
  const start = Date.UTC(2025, 0, 1);
  const at = (d: number) => new Date(start + d * 86_400_000 + d).toISOString();
  const batch = Array.from({ length: 150 }, (_, d) => record(20_000 + d, { createdAt: at(d) }));
  t.equal((await svc.request('POST', '/logs', { body: batch })).status, 202);
  for (let d = 150; d < 160; d++) t.equal((await svc.request('POST', '/logs', { body: record(20_000 + d, { createdAt: at(d) }) })).status, 202);
  await flush(svc);
  t.equal(await stored(ch, 'tokens_in >= 20000 AND tokens_in < 20160'), 160);
  t.equal(Number((await ch.query<{ n: number }>('SELECT uniqExact(toDate(created_at)) AS n FROM logs WHERE tokens_in >= 20000 AND tokens_in < 20160'))[0]!.n), 160, '160 partitions');
  t.same((await svc.request('GET', '/admin/logs/dead-letters', admin)).json, { items: [], total: 0, records: 0 });
  t.equal(await metric(svc, 'log_insert_errors_total{kind="refusal"}'), refusals0, 'cut by partition before the insert: no refusal on the way');
  const p = (await svc.request('GET', '/admin/logs/pipeline', admin)).json;
  t.match(p, { status: 'ok', dead_lettered: 0, pending: 0 });
});

t.test('refused rows among accepted ones: every 202 is stored or dead-lettered, the rest goes on; replay once the cause is gone', async (t) => {
  const before = (await svc.request('GET', '/admin/logs/pipeline', admin)).json;
  const dead0 = (await metric(svc, 'logs_dead_lettered_total')) ?? 0;
  const refusals0 = (await metric(svc, 'log_insert_errors_total{kind="refusal"}')) ?? 0;
  const restore = poisonInserts(ch);
  let accepted = 0;
  const batch = Array.from({ length: 50 }, (_, i) => record(30_000 + i, { model: i % 17 === 5 ? 'POISON' : 'm' }));
  const r = await svc.request('POST', '/logs', { body: batch });
  t.equal(r.status, 202);
  accepted += r.json.accepted;
  for (let i = 50; i < 60; i++) {
    const one = await svc.request('POST', '/logs', { body: record(30_000 + i, { model: i === 55 ? 'POISON' : 'm' }) });
    t.equal(one.status, 202);
    accepted += one.json.accepted;
  }
  await flush(svc);
  const poisoned = batch.filter((b) => b.model === 'POISON').length + 1;
  const good = await stored(ch, 'tokens_in >= 30000 AND tokens_in < 30060');
  const list = (await svc.request('GET', '/admin/logs/dead-letters', admin)).json;
  t.equal(good, 60 - poisoned, 'every good row stored');
  t.equal(list.records, poisoned, 'every refused row dead-lettered');
  t.equal(good + list.records, accepted, 'accepted = stored + dead-lettered: none lost');
  t.ok(list.items.every((l: { code: number }) => l.code === 25));
  t.ok(list.items[0].sample[0].includes('"POISON"'), 'the rows as accepted');
  const p = (await svc.request('GET', '/admin/logs/pipeline', admin)).json;
  t.match(p, { status: 'degraded', dead_lettered: poisoned, pending: 0, last_error: { code: 25 } });
  t.equal(p.accepted - before.accepted, 60);
  t.equal(p.stored - before.stored, 60 - poisoned);
  t.match(p.last_error.message, /surrogate|escape/i);
  t.ok(!Number.isNaN(Date.parse(p.newest_stored_at)), 'newest_stored_at is a time');
  t.match((await svc.request('GET', '/health')).json, { status: 'degraded', log_pipeline: 'degraded' });
  t.equal((await metric(svc, 'logs_dead_lettered_total'))! - dead0, poisoned);
  t.ok((await metric(svc, 'log_insert_errors_total{kind="refusal"}'))! - refusals0 >= poisoned);
  t.ok((await metric(svc, 'log_dead_letter_batches_total'))! >= 1);
  t.equal(await metric(svc, 'log_dead_letter_records'), poisoned);
  t.equal(await metric(svc, 'log_pipeline_degraded'), 1);

  // Replayed while the cause is still there: refused again, still a dead letter, and the answer says so.
  const id = list.items[0].id;
  const again = await svc.request('POST', `/admin/logs/dead-letters/${id}/replay`, admin);
  t.equal(again.status, 200);
  t.match(again.json, { id, stored: 0, remains: true, error: { code: 25 } });
  t.equal((await svc.request('GET', '/admin/logs/dead-letters', admin)).json.records, poisoned);

  restore(); // the cause is gone
  for (const l of list.items) {
    const done = await svc.request('POST', `/admin/logs/dead-letters/${l.id}/replay`, admin);
    t.equal(done.status, 200);
    t.match(done.json, { id: l.id, stored: l.records, refused: 0, remains: false, error: null });
  }
  t.equal(await stored(ch, 'tokens_in >= 30000 AND tokens_in < 30060'), 60, 'all stored once');
  t.equal(await stored(ch, "tokens_in >= 30000 AND tokens_in < 30060 AND model = 'POISON'"), poisoned);
  t.match((await svc.request('GET', '/admin/logs/dead-letters', admin)).json, { total: 0, records: 0 });
  t.match((await svc.request('GET', '/health')).json, { status: 'ok', log_pipeline: 'ok' });
  t.equal((await svc.request('POST', '/admin/logs/dead-letters/0000000000000-000000/replay', admin)).status, 404);
  t.equal((await svc.request('POST', '/admin/logs/dead-letters/..%2F..%2Fetc/replay', admin)).status, 400, 'ids are checked');
  t.equal((await svc.request('GET', '/admin/logs/dead-letters')).status, 401, 'admin only');
});

t.test('an outage is retried, never dead-lettered; the pipeline says degraded until it ends', async (t) => {
  const outages0 = (await metric(svc, 'log_insert_errors_total{kind="outage"}')) ?? 0;
  const real = ch.insert.bind(ch);
  ch.insert = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' }));
  for (let i = 0; i < 20; i++) t.equal((await svc.request('POST', '/logs', { body: record(40_000 + i) })).status, 202);
  await flush(svc);
  await new Promise((r) => setTimeout(r, 400)); // retries with backoff
  const p = (await svc.request('GET', '/admin/logs/pipeline', admin)).json;
  t.match(p, { status: 'degraded', dead_lettered: 0, pending: 20, last_error: { code: 'ECONNREFUSED' } });
  t.match((await svc.request('GET', '/health')).json, { status: 'degraded', log_pipeline: 'degraded', clickhouse: 'up' });
  t.ok((await metric(svc, 'log_insert_errors_total{kind="outage"}'))! - outages0 >= 2, 'retried');
  t.equal((await svc.request('GET', '/admin/logs/dead-letters', admin)).json.total, 0, 'nothing dead-lettered');
  ch.insert = real;
  await flush(svc);
  t.equal(await stored(ch, 'tokens_in >= 40000 AND tokens_in < 40020'), 20);
  t.match((await svc.request('GET', '/admin/logs/pipeline', admin)).json, { status: 'ok', pending: 0 });
  t.match((await svc.request('GET', '/health')).json, { status: 'ok', log_pipeline: 'ok' });
});

t.test('the new endpoints are in the OpenAPI document', async (t) => {
  const doc = (await svc.request('GET', '/swagger/doc.json')).json;
  t.ok(doc.paths['/admin/logs/pipeline']?.get);
  t.ok(doc.paths['/admin/logs/dead-letters']?.get);
  t.ok(doc.paths['/admin/logs/dead-letters/{id}/replay']?.post);
  t.ok(doc.paths['/admin/logs/dead-letters/{id}']?.delete);
});
