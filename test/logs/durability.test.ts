import t, { type Test } from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { adminToken, freshDatabase, postgresAvailable, redisAvailable, redisUrl, startTestService, type TestService } from '../helpers/harness.js';
import { logGenerationKey } from '../../src/storage/redis/layout.js';
import type { ClickHouse } from '../../src/storage/clickhouse/client.js';

const record = (i: number) => ({ key_id: 5, master_id: 3, status_code: 200, model: 'm', request_body: `req-${i}`, tokens_in: i });

interface LogsState {
  accepted: number;
  stored: number;
  spooled: number;
  refused: number;
  spoolBatches: number;
  spoolBytes: number;
  pendingRecords: number;
}
const state = (svc: TestService) => svc.service.system.ask<LogsState>('logs', 'state');

/** Makes ClickHouse refuse inserts, as an outage would, until the returned function is called. */
function breakInserts(ch: ClickHouse): () => void {
  const real = ch.insert.bind(ch);
  ch.insert = () => Promise.reject(new Error('ClickHouse unavailable (test outage)'));
  return () => {
    ch.insert = real;
  };
}

/**
 * A data directory and (when Postgres answers) a database that outlive one
 * service, so that a later start finds what an earlier one left; both are
 * removed when the test ends.
 */
async function lastingStores(t: Test, prefix: string): Promise<{ dataDir: string; databaseUrl: string | undefined }> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const db = (await postgresAvailable()) ? await freshDatabase() : undefined;
  t.teardown(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { dataDir, databaseUrl: db?.url };
}

const ids = async (ch: ClickHouse) =>
  (await ch.query<{ tokens_in: number }>('SELECT tokens_in FROM logs ORDER BY tokens_in')).map((r) => r.tokens_in);

t.test('an outage: batches retry, spill to the disk spool, and every record lands exactly once when it ends', async (t) => {
  const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '20', SVC_LOG_MEMORY_BYTES: '4096' } });
  t.teardown(() => svc.stop());
  const ch = svc.service.context.clickhouse;
  const restore = breakInserts(ch);
  for (let i = 0; i < 60; i++) t.equal((await svc.request('POST', '/logs', { body: record(i) })).status, 202);
  await new Promise((r) => setTimeout(r, 300));
  const during = await state(svc);
  t.ok(during.spoolBatches > 0, `the spool grew (${during.spoolBatches} batches, ${during.spoolBytes} bytes)`);
  t.equal(during.stored, 0);
  restore();
  await svc.service.system.ask('logs', 'flush');
  const got = await ids(ch);
  t.same(got, Array.from({ length: 60 }, (_, i) => i), 'every record exactly once');
  const after = await state(svc);
  t.equal(after.spoolBatches, 0, 'the spool is empty again');
  t.equal(after.stored, 60);
});

t.test('past the disk bound: 503 with Retry-After, never a silent drop', async (t) => {
  const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '10', SVC_LOG_MEMORY_BYTES: '2048', SVC_LOG_SPOOL_BYTES: '4096' } });
  t.teardown(() => svc.stop());
  const ch = svc.service.context.clickhouse;
  const restore = breakInserts(ch);
  let accepted = 0;
  let refused: { status: number; headers: Headers; json: any } | undefined;
  for (let i = 0; i < 400 && !refused; i++) {
    const r = await svc.request('POST', '/logs', { body: record(i) });
    if (r.status === 202) accepted++;
    else refused = r;
    if (i % 10 === 0) await new Promise((res) => setTimeout(res, 15));
  }
  t.ok(refused, 'backpressure reached');
  t.equal(refused!.status, 503);
  t.equal(refused!.json.code, 'unavailable');
  t.ok(Number(refused!.headers.get('retry-after')) > 0);
  restore();
  await svc.service.system.ask('logs', 'flush');
  t.equal((await ids(ch)).length, accepted, 'exactly the accepted records are stored');
});

t.test('shutdown while ClickHouse is down spools everything; the next start replays it', async (t) => {
  const { dataDir, databaseUrl } = await lastingStores(t, 'cp-spool-');
  const first = await startTestService({ dataDir, databaseUrl, keepData: true, env: { SVC_LOG_FLUSH_MS: '5000' } });
  breakInserts(first.service.context.clickhouse);
  for (let i = 0; i < 25; i++) await first.request('POST', '/logs', { body: record(i) });
  await first.stop(); // SIGTERM path: flush or spool
  const files = readdirSync(join(dataDir, 'log-spool'));
  t.ok(files.length > 0 && files.every((f) => /^\d{12}-\d+\.compact\.ndjson$/.test(f)), `spooled as compact rows (${files.join(', ')})`);
  const second = await startTestService({ dataDir, databaseUrl, keepData: true });
  t.teardown(() => second.stop());
  await second.service.system.ask('logs', 'flush');
  t.same(await ids(second.service.context.clickhouse), Array.from({ length: 25 }, (_, i) => i), 'replayed in full, once');
  const r = await second.request('POST', '/logs', { body: record(99) });
  t.equal(r.status, 202);
  const listed = await second.request('GET', '/admin/logs?limit=1', { token: adminToken });
  t.ok(listed.json.total >= 25);
});

for (const ack of ['durable', 'memory']) {
  t.test(`shutdown (${ack}) stops inserting after SVC_LOG_SHUTDOWN_INSERT_MS and spools the rest; the next start stores it`, async (t) => {
    const { dataDir, databaseUrl } = await lastingStores(t, 'cp-stop-');
    // A budget of 0: the batch sealed at shutdown is not inserted (with the default 5 s it would be, and the spool stay empty).
    const env = { SVC_LOG_ACK: ack, SVC_LOG_FLUSH_MS: '60000', SVC_LOG_SHUTDOWN_INSERT_MS: '0' };
    const first = await startTestService({ dataDir, databaseUrl, keepData: true, env });
    for (let i = 0; i < 25; i++) t.equal((await first.request('POST', '/logs', { body: record(i) })).status, 202);
    await first.stop();
    const files = readdirSync(join(dataDir, 'log-spool'));
    t.ok(files.length > 0, `left in the spool (${files.join(', ')})`);
    const second = await startTestService({ dataDir, databaseUrl, keepData: true });
    t.teardown(() => second.stop());
    await second.service.system.ask('logs', 'flush');
    t.same(await ids(second.service.context.clickhouse), Array.from({ length: 25 }, (_, i) => i), 'stored by the next start, once');
    t.same(readdirSync(join(dataDir, 'log-spool')), [], 'the spool is empty again');
  });
}

const shared = (await redisAvailable()) ? false : 'needs Redis: the in-process store ends with the process';
t.test('records stored at shutdown raise their generation in the shared store: it closes after the actors', { skip: shared }, async (t) => {
  const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '60000' } });
  t.teardown(() => svc.stop());
  const redis = new Redis(redisUrl);
  t.teardown(() => redis.quit());
  const generation = async () => Number((await redis.hget(logGenerationKey, 'm:3')) ?? 0);
  const before = await generation();
  for (let i = 0; i < 5; i++) t.equal((await svc.request('POST', '/logs', { body: record(i) })).status, 202);
  t.equal(await generation(), before, 'held by the writer until its flush');
  await svc.stop();
  t.equal(await generation(), before + 1, 'the batch written while stopping raised the master\'s generation');
});

t.test('records of any size and script cross the writer buffer boundaries intact', async (t) => {
  // 1 KiB batches: most requests land next to a batch edge; lengths and scripts vary the UTF-8 size of each line.
  const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '20', SVC_LOG_BATCH_BYTES: '1024' } });
  t.teardown(() => svc.stop());
  const pieces = ['a', 'é', '日本', '😀', '"\\\n'];
  const body = (i: number) => pieces[i % pieces.length]!.repeat(1 + ((i * 37) % 700));
  const sent: string[] = [];
  for (let i = 0; i < 60; i++) {
    sent.push(body(i));
    if (i % 10 === 9) {
      const batch = Array.from({ length: 3 }, (_, k) => ({ ...record(1000 + i * 3 + k), request_body: body(1000 + i * 3 + k) }));
      t.equal((await svc.request('POST', '/logs', { body: batch })).status, 202);
    }
    t.equal((await svc.request('POST', '/logs', { body: { ...record(i), request_body: sent[i] } })).status, 202);
  }
  await svc.service.system.ask('logs', 'flush');
  const rows = await svc.service.context.clickhouse.query<{ tokens_in: number; request_body: string }>(
    'SELECT tokens_in, request_body FROM logs ORDER BY tokens_in',
  );
  const stored = new Map(rows.map((r) => [r.tokens_in, r.request_body]));
  t.equal(rows.length, 60 + 18, 'every record once');
  t.ok(sent.every((b, i) => stored.get(i) === b), 'single records unchanged');
  t.ok(rows.filter((r) => r.tokens_in >= 1000).every((r) => r.request_body === body(r.tokens_in)), 'batch records unchanged');
});

t.test('spool files of the earlier object form (and compact ones of another column list) replay after an upgrade', async (t) => {
  const { dataDir, databaseUrl } = await lastingStores(t, 'cp-spool-old-');
  const spool = join(dataDir, 'log-spool');
  mkdirSync(spool, { recursive: true });
  // As the version before the column list wrote them: JSONEachRow objects, with whatever unknown fields came in.
  const old = (i: number) => JSON.stringify({ ...record(i), id: 1000 + i, created_at: '2026-11-20 10:00:00.000', unknown_field: 'x' });
  writeFileSync(join(spool, '000000000001-2.ndjson'), `${old(0)}\n${old(1)}\n`);
  // A compact file names its own columns, so it replays even if LOG_COLUMNS has changed since.
  const header = JSON.stringify(['id', 'key_id', 'master_id', 'status_code', 'tokens_in', 'created_at']);
  writeFileSync(join(spool, '000000000002-1.compact.ndjson'), `${header}\n[1002,5,3,200,2,"2026-11-20 10:00:01.000"]\n`);
  writeFileSync(join(spool, '000000000003-1.ndjson.tmp'), `${old(9)}\n`); // an unfinished write: never acknowledged
  const svc = await startTestService({ dataDir, databaseUrl, keepData: true, env: { SVC_LOG_FLUSH_MS: '20' } });
  t.teardown(() => svc.stop());
  await svc.service.system.ask('logs', 'flush');
  const ch = svc.service.context.clickhouse;
  const rows = await ch.query<{ id: number; tokens_in: number; model: string; c: string; u: string }>(
    'SELECT id, tokens_in, model, toString(created_at) AS c, toString(updated_at) AS u FROM logs ORDER BY id',
  );
  t.same(
    rows,
    [
      { id: 1000, tokens_in: 0, model: 'm', c: '2026-11-20 10:00:00.000', u: '2026-11-20 10:00:00.000' },
      { id: 1001, tokens_in: 1, model: 'm', c: '2026-11-20 10:00:00.000', u: '2026-11-20 10:00:00.000' },
      { id: 1002, tokens_in: 2, model: '', c: '2026-11-20 10:00:01.000', u: '2026-11-20 10:00:01.000' },
    ],
    'both forms replayed once, in order; the unfinished file ignored',
  );
  t.same(readdirSync(spool), [], 'the spool is empty again');
  t.equal((await svc.request('POST', '/logs', { body: record(7) })).status, 202);
  await svc.service.system.ask('logs', 'flush');
  t.equal((await ids(ch)).length, 4);
});
