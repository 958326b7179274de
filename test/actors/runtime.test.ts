import t from 'tap';
import { pino } from 'pino';
import { ActorSystem } from '../../src/actors/runtime/system.js';
import { Clock } from '../../src/actors/runtime/clock.js';
import { Batcher } from '../../src/actors/runtime/batcher.js';
import { Mailbox } from '../../src/actors/runtime/mailbox.js';
import { AppError } from '../../src/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/storage/postgres/open.js';
import type { BaseContext } from '../../src/actors/runtime/actor.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'cp-actors-'));
const database = await openDatabase({ dataDir: dir });
const config = loadConfig({ SVC_DATA_DIR: dir, SVC_LOG_LEVEL: 'silent' });
const log = pino({ level: 'silent' });
const clock = new Clock();
const system = new ActorSystem({
  log,
  clock,
  config,
  databaseUrl: database.url,
  workerActors: ['probe'],
  registry: new URL('./fixtures/registry.js', import.meta.url).href,
  threads: 1,
});
let total = 0;
const ctx: BaseContext = { config, log, db: database.pool, now: () => clock.now(), ...system.messaging };
system.register(
  {
    name: 'counter',
    placement: 'main',
    handlers: {
      add: (n: number) => (total += n),
      slowAdd: async (n: number) => {
        await new Promise((r) => setTimeout(r, 20));
        return (total += n);
      },
    },
  },
  ctx,
);
await system.start();

t.teardown(async () => {
  await system.stop();
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

t.test('ask reaches a worker actor and returns plain data', async (t) => {
  const r = await system.ask<{ payload: unknown; threadId: number }>('probe', 'echo', { a: [1, 2] });
  t.same(r.payload, { a: [1, 2] });
  t.not(r.threadId, 0, 'ran off the main thread');
});

t.test('typed errors keep their code, status and data across the thread', async (t) => {
  const err = await system.ask('probe', 'typedError').catch((e: unknown) => e);
  t.ok(err instanceof AppError);
  t.equal((err as AppError).code, 'conflict');
  t.equal((err as AppError).status, 409);
  t.same((err as AppError).data, { id: 7 });
});

t.test('untyped errors become internal without leaking their text', async (t) => {
  const err = (await system.ask('probe', 'plainError').catch((e: unknown) => e)) as AppError;
  t.equal(err.code, 'internal');
  t.notMatch(err.message, /secret/);
});

t.test('a worker actor asks a main-thread actor', async (t) => {
  const before = total;
  const r = await system.ask('probe', 'askMain', 5);
  t.equal(r, before + 5);
});

t.test('the shared clock moves on every thread', async (t) => {
  clock.advance(3_600_000);
  const workerNow = await system.ask<number>('probe', 'now');
  t.ok(workerNow - Date.now() > 3_500_000, 'worker sees the moved clock');
  clock.advance(-3_600_000);
});

t.test('a crashed worker fails its in-flight asks cleanly and is replaced', async (t) => {
  const inflight = system.ask('probe', 'slow', 2000).catch((e: unknown) => e);
  const err = (await system.ask('probe', 'crash').catch((e: unknown) => e)) as AppError;
  t.ok(err instanceof AppError);
  t.equal(err.code, 'unavailable');
  t.equal(err.status, 503);
  const other = (await inflight) as AppError;
  t.equal(other.code, 'unavailable', 'the other in-flight ask on the dead thread fails too');
  const r = await system.ask<{ payload: unknown }>('probe', 'echo', 'again');
  t.equal(r.payload, 'again', 'a new worker answers');
});

t.test('unknown actors and messages are errors, not hangs', async (t) => {
  await t.rejects(system.ask('nobody', 'x'));
  await t.rejects(system.ask('counter', 'nothing'));
});

t.test('a main mailbox runs messages in order, one at a time by default', async (t) => {
  const seen: number[] = [];
  const box = new Mailbox(1);
  const runs = [30, 10, 0].map((ms, i) =>
    box.post(async () => {
      await new Promise((r) => setTimeout(r, ms));
      seen.push(i);
    }),
  );
  t.equal(box.depth, 3);
  await box.drain();
  await Promise.all(runs);
  t.same(seen, [0, 1, 2]);
  t.equal(box.depth, 0);
});

t.test('a handler that answers without awaiting: its value or error, the slot freed at once, order kept', async (t) => {
  const box = new Mailbox(1);
  t.equal(await box.post(() => 7), 7);
  t.equal(box.depth, 0, 'a synchronous answer holds no slot');
  await t.rejects(box.post(() => {
    throw new Error('sync failure');
  }), /sync failure/);
  t.equal(box.depth, 0);
  const seen: string[] = [];
  let release!: () => void;
  const slow = box.post(async () => {
    await new Promise<void>((r) => (release = r));
    seen.push('slow');
  });
  const quick = box.post(() => seen.push('quick')); // must wait for the slot, not overtake
  t.equal(box.depth, 2);
  t.same(seen, []);
  release();
  await Promise.all([slow, quick]);
  t.same(seen, ['slow', 'quick']);
  await box.drain();
  t.equal(box.depth, 0);
});

t.test('the batcher cuts by count, by bytes and by time, in order', async (t) => {
  const batches: number[][] = [];
  const b = new Batcher<number>({ maxItems: 3, maxBytes: 100, maxDelayMs: 30 }, async (items) => {
    batches.push(items);
  });
  b.add(1);
  b.add(2);
  b.add(3); // count
  b.add(4, 150); // bytes
  b.add(5); // time
  await new Promise((r) => setTimeout(r, 80));
  t.same(batches, [[1, 2, 3], [4], [5]]);
  b.add(6);
  await b.flush();
  t.same(batches.at(-1), [6], 'flush sends what is pending');
});

t.test('a failing delivery does not stop later batches', async (t) => {
  const errors: unknown[] = [];
  const got: number[][] = [];
  const b = new Batcher<number>(
    { maxItems: 1, maxBytes: 1e9, maxDelayMs: 1000, onError: (e) => errors.push(e) },
    async (items) => {
      if (items[0] === 1) throw new Error('boom');
      got.push(items);
    },
  );
  b.add(1);
  b.add(2);
  await b.flush();
  t.equal(errors.length, 1);
  t.same(got, [[2]]);
});

t.test('stop drains main mailboxes', async (t) => {
  const before = total;
  const pending = system.ask('counter', 'slowAdd', 1);
  await system.stop();
  t.equal(await pending, before + 1);
});
