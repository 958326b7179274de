/**
 * The ClickHouse write path's layers alone, on the real embedded engine:
 * error classification by code, partition cuts, isolation of refused rows,
 * the spool's replacement of a half-stored batch, the dead letters and the
 * table writer with refusals and with an outage.
 */
import t from 'tap';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../src/logger.js';
import { LOG_DAYS_PER_INSERT, MAX_PARTITIONS_PER_INSERT, type InsertOptions } from '../../src/storage/clickhouse/client.js';
import { migrateClickHouse } from '../../src/storage/clickhouse/migrate.js';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';
import { LOG_COLUMNS, partitionOfRow, toRow } from '../../src/storage/clickhouse/logs-table.js';
import { classifyInsertError, errorCode } from '../../src/storage/clickhouse/write/errors.js';
import { countLines, splitByPartition } from '../../src/storage/clickhouse/write/lines.js';
import { insertIsolating } from '../../src/storage/clickhouse/write/isolate.js';
import { Spool } from '../../src/storage/clickhouse/write/spool.js';
import { DeadLetterStore } from '../../src/storage/clickhouse/write/dead-letters.js';
import { TableWriter, type Inserter } from '../../src/storage/clickhouse/write/writer.js';

const SQL_DIR = fileURLToPath(new URL('../../../sql/clickhouse', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'ch-write-'));
const ch = await openClickHouse({ dataDir: join(root, 'ch') });
await migrateClickHouse(ch, SQL_DIR);
t.teardown(async () => {
  await ch.close();
  rmSync(root, { recursive: true, force: true });
});
const log = createLogger('silent');
const compact: InsertOptions = { format: 'JSONCompactEachRow', columns: LOG_COLUMNS };
const day = 86_400_000;
const chText = (ms: number) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');

let nextId = 1;
/** A row as the logs actor writes it; `model` may be raw JSON text spliced in (to craft rows ClickHouse refuses). */
function row(over: { at?: number; master?: number; tokens?: number; rawModel?: string } = {}): string {
  const id = nextId++;
  const line = JSON.stringify(toRow({ key_id: 1, master_id: over.master ?? 1, status_code: 200, model: 'MODEL', tokens_in: over.tokens ?? id }, id, chText(over.at ?? Date.UTC(2026, 0, 1)), true, { cost: '0', unpriced: true }));
  return over.rawModel === undefined ? line : line.replace('"MODEL"', over.rawModel);
}
const LONE_SURROGATE = '"\\ud800"'; // ClickHouse: Code 25, CANNOT_PARSE_ESCAPE_SEQUENCE
const ndjson = (rows: string[]) => Buffer.from(rows.map((r) => `${r}\n`).join(''));
const count = async (where = '1') => Number((await ch.query<{ n: number }>(`SELECT count() AS n FROM logs WHERE ${where}`))[0]!.n);
const insertLogs = (rows: Buffer) => ch.insert('logs', rows, compact);

t.test('refusal or outage, by the code each transport carries', async (t) => {
  const refused = await ch.insert('logs', ndjson([row({ rawModel: LONE_SURROGATE })]), compact).then(() => null, (e: unknown) => e);
  t.ok(refused, 'the engine refuses a lone surrogate');
  t.equal(errorCode(refused), 25, "chDB's code");
  t.match(classifyInsertError(refused), { kind: 'refusal', code: 25 });
  const broken = await ch.insert('logs', Buffer.from('[1,2,3\n'), compact).then(() => null, (e: unknown) => e);
  t.match(classifyInsertError(broken), { kind: 'refusal', code: 27 });
  const spread = ndjson(Array.from({ length: MAX_PARTITIONS_PER_INSERT + 1 }, (_, i) => row({ at: Date.UTC(2025, 0, 1) + i * day })));
  const tooMany = await ch.insert('logs', spread, compact).then(() => null, (e: unknown) => e);
  t.match(classifyInsertError(tooMany), { kind: 'refusal', code: 252 }, 'too many partitions: the rows are at fault');
  // The HTTP client's ClickHouseError carries the code as digits; Node's connection errors their own codes.
  t.match(classifyInsertError(Object.assign(new Error('Too many parts (300). Merges are processing significantly slower than inserts'), { code: '252' })), { kind: 'outage', code: 252 });
  t.match(classifyInsertError(Object.assign(new Error('Memory limit exceeded'), { code: '241' })), { kind: 'outage', code: 241 });
  t.match(classifyInsertError(Object.assign(new Error('Cannot parse input'), { code: '27' })), { kind: 'refusal', code: 27 });
  t.match(classifyInsertError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' })), { kind: 'outage', code: 'ECONNREFUSED' });
  t.match(classifyInsertError(new Error('Timeout error.')), { kind: 'outage', code: null }, 'no code: an outage, never a dead letter');
  t.match(classifyInsertError(new Error('Code: 210. DB::NetException: Connection refused')), { kind: 'outage', code: 210 });
  t.equal(await count(), 0, 'nothing of the refused inserts was stored');
});

t.test('a batch over more than 100 UTC days is cut into inserts ClickHouse takes', async (t) => {
  const start = Date.UTC(2024, 0, 1);
  const rows = Array.from({ length: 250 }, (_, i) => row({ at: start + (i % 130) * day + i, tokens: 7000 + i }));
  const data = ndjson(rows);
  // At most LOG_DAYS_PER_INSERT days an insert: each day may also be another month of the grains tables (020).
  const groups = splitByPartition(data, partitionOfRow, LOG_DAYS_PER_INSERT);
  t.equal(groups.length, 3, '130 days: three groups of at most 50 days');
  t.equal(groups.reduce((n, g) => n + g.records, 0), 250, 'every row in a group');
  for (const g of groups) {
    t.equal(countLines(g.data), g.records);
    await insertLogs(g.data);
  }
  t.equal(await count('tokens_in >= 7000 AND tokens_in < 7250'), 250, 'all stored');
  const one = ndjson([row(), row()]);
  const whole = splitByPartition(one, partitionOfRow, LOG_DAYS_PER_INSERT);
  t.equal(whole.length, 1);
  t.equal(whole[0]!.data, one, 'a batch of one day comes back as it is, not copied');
  t.equal(partitionOfRow(Buffer.from('{"a":1}'), 0, 7), -1, 'an object row has no partition it can tell');
});

t.test('isolation: refused rows are found by halves, the rest is stored once', async (t) => {
  const rows = Array.from({ length: 40 }, (_, i) => row({ tokens: 8000 + i, rawModel: i === 3 || i === 29 ? LONE_SURROGATE : undefined }));
  rows.push('[1,2,3'); // not even JSON
  const d = await insertIsolating(insertLogs, [ndjson(rows)]);
  t.equal(d.stored, 38);
  t.equal(d.outage, null);
  t.same(d.refused.map((r) => [r.error.code, r.rows.length]), [[25, 2], [27, 1]], 'grouped by code');
  t.ok(d.refusals > 3, `${d.refusals} refused inserts on the way`);
  t.equal(await count('tokens_in >= 8000 AND tokens_in < 8040'), 38, 'each good row once');
});

t.test('isolation stopped by an outage says what is left, so a retry stores nothing twice', async (t) => {
  const rows = Array.from({ length: 8 }, (_, i) => row({ tokens: 9000 + i, rawModel: i === 1 ? LONE_SURROGATE : undefined }));
  let calls = 0;
  const flaky = async (data: Buffer) => {
    if (++calls === 4) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    await insertLogs(data);
  };
  const first = await insertIsolating(flaky, [ndjson(rows)]);
  t.ok(first.outage, 'stopped by the outage');
  t.equal(first.outage!.error.kind, 'outage');
  const left = first.outage!.left.reduce((n, p) => n + countLines(p), 0);
  const refusedFirst = first.refused.reduce((n, r) => n + r.rows.length, 0);
  t.equal(first.stored + left + refusedFirst, 8, 'every row stored, refused or left');
  const second = await insertIsolating(insertLogs, first.outage!.left);
  t.equal(first.stored + second.stored, 7);
  t.equal(refusedFirst + second.refused.reduce((n, r) => n + r.rows.length, 0), 1);
  t.equal(await count('tokens_in >= 9000 AND tokens_in < 9008'), 7, 'no row twice');
});

t.test('the spool replaces a half-stored head; after a crash between the two files, the smaller wins', async (t) => {
  const dir = join(root, 'spool-replace');
  const spool = new Spool(dir);
  await spool.append(ndjson([row(), row(), row()]), 3, LOG_COLUMNS);
  await spool.append(ndjson([row()]), 1, LOG_COLUMNS);
  await spool.replaceHead(ndjson([row()]), 1, LOG_COLUMNS);
  t.same(readdirSync(dir).sort(), ['000000000001-1.compact.ndjson', '000000000002-1.compact.ndjson']);
  t.equal(spool.records, 2);
  // As a crash after writing the replacement and before removing the original would leave them:
  writeFileSync(join(dir, '000000000001-3.compact.ndjson'), readFileSync(join(dir, '000000000001-1.compact.ndjson')));
  const again = new Spool(dir);
  t.equal(again.size, 2);
  t.equal(again.records, 2, 'the replacement (fewer records) is kept');
  t.same(readdirSync(dir).sort(), ['000000000001-1.compact.ndjson', '000000000002-1.compact.ndjson']);
});

t.test('dead letters: on disk with their error, listed after a restart, rewritten, removed', async (t) => {
  const dir = join(root, 'dead');
  const store = new DeadLetterStore(dir);
  const rows = ndjson([row({ rawModel: LONE_SURROGATE }), row({ rawModel: LONE_SURROGATE })]);
  const l = await store.add({ table: 'logs', columns: [...LOG_COLUMNS], records: 2, code: 25, message: 'Cannot parse escape sequence', at: '2026-11-25T00:00:00.000Z' }, rows);
  const file = readFileSync(join(dir, `${l.id}.ndjson`), 'utf8').split('\n');
  t.match(JSON.parse(file[0]!), { table: 'logs', records: 2, code: 25, message: 'Cannot parse escape sequence', at: '2026-11-25T00:00:00.000Z' });
  t.equal(file.length, 4, 'header, two rows, final newline');
  const reopened = new DeadLetterStore(dir);
  t.match(reopened.list(), [{ id: l.id, records: 2, code: 25 }]);
  t.same(await reopened.rows(l.id), rows, 'rows as they were');
  t.equal(reopened.records, 2);
  t.ok(await reopened.remove(l.id));
  t.notOk(await reopened.remove(l.id));
  t.same(readdirSync(dir), []);
});

/** A transport in front of the real engine: fails like a refused connection while `down` is set. */
function outageSwitch(): Inserter & { down: boolean; calls: number } {
  return {
    down: false,
    calls: 0,
    async insert(table, rows, options) {
      this.calls++;
      if (this.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
      await ch.insert(table, rows, options);
    },
  };
}

const writerIn = (name: string, target: Inserter) =>
  new TableWriter(
    {
      table: 'logs', columns: LOG_COLUMNS, batchRecords: 1000, batchBytes: 1 << 20, flushMs: 10_000, memoryBytes: 1 << 20, spoolBytes: 1 << 24,
      spoolDir: join(root, name, 'spool'), deadLetterDir: join(root, name, 'dead'), partitionOf: partitionOfRow, maxPartitions: LOG_DAYS_PER_INSERT,
    },
    target,
    log,
  );

t.test('the writer: an outage is retried, never dead-lettered; refused rows are; every accepted record is one or the other', async (t) => {
  const target = outageSwitch();
  const w = writerIn('writer', target);
  w.start();
  target.down = true;
  const good = Array.from({ length: 30 }, (_, i) => row({ tokens: 10_000 + i, at: Date.UTC(2025, 0, 1) + i * 5 * day })); // 30 days, one batch
  for (const r of good) t.ok(w.accept(r, 1, 1));
  t.ok(w.accept(row({ tokens: 10_100, rawModel: LONE_SURROGATE }), 1, 2));
  await w.flushNow();
  t.equal(w.stats.stored, 0);
  t.equal(w.stats.deadLettered, 0, 'an outage dead-letters nothing');
  t.ok(w.stats.insertOutages >= 1);
  t.equal(w.stats.insertRefusals, 0);
  t.ok(w.degraded, 'degraded while inserts fail');
  t.match(w.stats.lastError, { code: 'ECONNREFUSED' });
  await new Promise((r) => setTimeout(r, 250)); // a retry or two, still down
  t.ok(target.calls >= 2, `retried (${target.calls} calls)`);
  t.equal(w.deadLetters.size, 0);
  target.down = false;
  await w.flushNow();
  t.equal(w.stats.stored, 30);
  t.equal(w.stats.deadLettered, 1);
  t.equal(w.stats.accepted, w.stats.stored + w.stats.deadLettered, 'accepted = stored + dead-lettered');
  t.match(w.deadLetters.list(), [{ records: 1, code: 25 }]);
  t.ok(w.degraded, 'degraded while a dead letter waits');
  t.equal(await count('tokens_in >= 10000 AND tokens_in < 10030'), 30);
  await w.stop();
});

t.test('a refusal, an outage and a crash: the pieces left are retried as cut, so the replay stores no row twice, in logs or the rollups', async (t) => {
  const dir = join(root, 'bisect-crash');
  const writer = (walDir: string, target: Inserter, name: string) =>
    new TableWriter(
      {
        table: 'logs', columns: LOG_COLUMNS, batchRecords: 1000, batchBytes: 1 << 20, flushMs: 10_000, memoryBytes: 1 << 20, spoolBytes: 1 << 24,
        spoolDir: join(dir, name, 'spool'), deadLetterDir: join(dir, name, 'dead'), partitionOf: partitionOfRow, maxPartitions: LOG_DAYS_PER_INSERT,
        ack: 'durable', walDir,
      },
      target,
      log,
    );
  // Row 1 is refused. Inserts: the batch (refused), rows 0-3 (refused), rows 0-1 (refused), row 0, row 1 (refused),
  // then rows 2-3: an outage. What is left is two pieces, rows 2-3 and 4-7; joined into one insert, their bytes
  // (so their token) would match nothing a replay of the whole batch cuts.
  let calls = 0;
  const target: Inserter = {
    async insert(table, rows, options) {
      if (++calls === 6) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
      await ch.insert(table, rows, options);
    },
  };
  const first = writer(join(dir, 'wal'), target, 'first');
  first.start();
  for (let i = 0; i < 8; i++) t.ok(first.accept(row({ master: 77, tokens: 12_000 + i, rawModel: i === 1 ? LONE_SURROGATE : undefined }), 1, 77));
  // The crash comes after the retry's inserts but before the segment is removed: a copy of the file as it was.
  cpSync(join(dir, 'wal'), join(dir, 'wal-at-crash'), { recursive: true });
  await first.flushNow();
  t.ok(calls >= 6, 'the outage stopped the isolation');
  await new Promise((r) => setTimeout(r, 300)); // the retry (100 ms backoff)
  await first.flushNow();
  t.equal(first.stats.stored, 7);
  t.equal(first.stats.deadLettered, 1);
  await first.stop();

  // The replay writes its dead letters where the first writer did (one data directory).
  cpSync(join(dir, 'first', 'dead'), join(dir, 'replay', 'dead'), { recursive: true });
  const replay = writer(join(dir, 'wal-at-crash'), outageSwitch(), 'replay');
  replay.start();
  await replay.flushNow();
  t.equal(replay.deadLetters.records, 1, 'the refused row is set apart once, not again by the replay');
  t.equal(replay.stats.deadLettered, 0);
  await replay.stop();
  t.equal(await count('master_id = 77'), 7, 'each good row once in logs');
  t.equal(await count('master_id = 77 AND tokens_in IN (12002, 12003, 12004)'), 3, 'the pieces retried after the outage are not stored again');
  for (const table of ['logs_minute', 'logs_hourly', 'logs_daily']) {
    const [r] = await ch.query<{ n: string }>(`SELECT toString(sum(requests)) AS n FROM ${table} WHERE master_id = 77`);
    t.equal(r!.n, '7', `${table} counts each row once`);
  }
});

t.test('after a replay: the recovery check runs before any new batch, is retried, and is given up after 5 failures', async (t) => {
  const dir = join(root, 'recovery');
  const inserted: Array<{ tokens: number[]; checked: boolean }> = [];
  const run = async (name: string, fails: number): Promise<{ tries: number; w: TableWriter }> => {
    const walDir = join(dir, name, 'wal');
    mkdirSync(walDir, { recursive: true });
    // A segment left by a crash: one batch read back at start.
    writeFileSync(join(walDir, '000000000001.wal'), `${JSON.stringify(LOG_COLUMNS)}\n${row({ master: 88, tokens: 13_000 })}\n`);
    let tries = 0;
    let checked = false;
    const target: Inserter = {
      async insert(table, rows, options) {
        inserted.push({ tokens: rows.toString().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as number[])[7]!), checked });
        await ch.insert(table, rows, options);
      },
    };
    const w = new TableWriter(
      {
        table: 'logs', columns: LOG_COLUMNS, batchRecords: 1000, batchBytes: 1 << 20, flushMs: 10_000, memoryBytes: 1 << 20, spoolBytes: 1 << 24,
        spoolDir: join(dir, name, 'spool'), deadLetterDir: join(dir, name, 'dead'), partitionOf: partitionOfRow, maxPartitions: LOG_DAYS_PER_INSERT,
        ack: 'durable', walDir,
        afterRecovery: async () => {
          if (++tries <= fails) throw new Error(`check failed (${tries})`);
          checked = true;
        },
      },
      target,
      log,
    );
    w.start();
    t.ok(w.accept(row({ master: 88, tokens: 13_001 }), 1, 88));
    for (let i = 0; i < 40 && w.backlogState.pendingRecords > 0; i++) {
      await w.flushNow();
      await new Promise((r) => setTimeout(r, 100));
    }
    return { tries, w };
  };
  const twice = await run('fails-twice', 2);
  t.equal(twice.tries, 3, 'retried until it passed');
  t.same(inserted.find((i) => i.tokens.includes(13_001)), { tokens: [13_001], checked: true }, 'the new record went in after the check passed');
  t.equal(twice.w.stats.stored, 2);
  await twice.w.stop();
  inserted.length = 0;
  const never = await run('never-passes', Infinity);
  t.equal(never.tries, 5, 'given up after 5 tries');
  t.same(inserted.find((i) => i.tokens.includes(13_001)), { tokens: [13_001], checked: false }, 'ingestion goes on without it');
  t.equal(never.w.stats.stored, 2);
  await never.w.stop();
});

t.test('replay: refused again stays a dead letter; once the row is fixed it is stored', async (t) => {
  const w = writerIn('replay', outageSwitch());
  w.start();
  w.accept(row({ tokens: 11_000, rawModel: LONE_SURROGATE }), 1, 1);
  w.accept(row({ tokens: 11_001 }), 1, 1);
  await w.flushNow();
  const [letter] = w.deadLetters.list();
  t.ok(letter);
  const again = await w.replay(letter!.id);
  t.match(again, { stored: 0, refused: 1, error: { kind: 'refusal', code: 25 } });
  t.equal(w.deadLetters.size, 1, 'still a dead letter');
  // The operator fixes the row in the file (the rows are NDJSON after the header line), then replays.
  const file = join(root, 'replay', 'dead', `${letter!.id}.ndjson`);
  writeFileSync(file, readFileSync(file, 'utf8').replace(LONE_SURROGATE, '"fixed"'));
  const fixed = await w.replay(letter!.id);
  t.match(fixed, { stored: 1, refused: 0, error: null });
  t.equal(w.deadLetters.size, 0);
  t.notOk(w.degraded);
  t.equal(await count("tokens_in IN (11000, 11001)"), 2);
  t.equal(await count("tokens_in = 11000 AND model = 'fixed'"), 1);
  t.equal(await w.replay('0000000000000-000000'), null, 'an unknown id');
  await w.stop();
});
