/**
 * The statistics cache across nodes: two nodes, each with its own cache and
 * generations, share the generation counters through real Redis, so a change
 * made on one node makes the other's answers of that scope fresh (and only
 * those); plus the bounds of one cache: maximum age, entry count, rejected
 * reads not kept, and reads straight to ClickHouse while the store is down.
 * Reads run on the real engine (chDB; over HTTP through the bridge in bridge mode).
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import type { ClickHouse, ClickHouseReader, QueryParams } from '../../src/storage/clickhouse/client.js';
import { RedisStore } from '../../src/storage/redis/redis-store.js';
import { MemoryStore } from '../../src/storage/redis/memory-store.js';
import type { SharedStore } from '../../src/storage/redis/store.js';
import { logGenerationKey } from '../../src/storage/redis/layout.js';
import { LogGenerations } from '../../src/actors/logs/generations.js';
import { StatsReadCache } from '../../src/actors/analytics/read-cache.js';
import { openTestClickHouse, redisAvailable } from '../helpers/harness.js';

// Its own database: the generation hash is shared by every node on a Redis, so other test files must not touch it.
const redisUrl = process.env.TEST_REDIS_CACHE_URL ?? 'redis://127.0.0.1:6379/14';
const log = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'cp-cache-'));
const ch: ClickHouse = await openTestClickHouse(dir);
t.teardown(async () => {
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The real engine, counting the queries that reach it. */
function counting(): ClickHouseReader & { sent: number } {
  const reader = {
    sent: 0,
    query: <T>(sql: string, params?: QueryParams) => {
      reader.sent++;
      return ch.query<T>(sql, params);
    },
  };
  return reader;
}

let clock = 1_000_000;
const node = (store: SharedStore, opts: { maxEntries?: number; maxAgeMs?: number } = {}) => {
  const engine = counting();
  const generations = new LogGenerations(store, log);
  const cache = new StatsReadCache(engine, generations, { maxEntries: opts.maxEntries ?? 100, maxAgeMs: opts.maxAgeMs ?? 60_000, now: () => clock });
  return { engine, generations, cache };
};
const one = async (reader: ClickHouseReader, x: number): Promise<number> =>
  Number((await reader.query<{ x: number }>('SELECT {x:UInt32} AS x', { x }))[0]!.x);

t.test('two nodes sharing Redis', { skip: !(await redisAvailable().catch(() => false)) && 'Redis does not answer' }, async (t) => {
  const raw = new Redis(redisUrl);
  await raw.del(logGenerationKey);
  const stores = [await RedisStore.open({ url: redisUrl }), await RedisStore.open({ url: redisUrl })];
  t.teardown(async () => {
    await raw.del(logGenerationKey);
    raw.disconnect();
    for (const s of stores) await s.close();
  });
  const a = node(stores[0]!);
  const b = node(stores[1]!);

  const read = async (n: typeof a, master: number | undefined, x: number) => one(await n.cache.reader(master), x);
  t.equal(await read(b, 7, 1), 1);
  t.equal(await read(b, 8, 2), 2);
  t.equal(await read(b, undefined, 3), 3);
  t.equal(b.engine.sent, 3);
  await read(b, 7, 1);
  await read(b, 8, 2);
  await read(b, undefined, 3);
  t.equal(b.engine.sent, 3, 'repeated reads are served by the cache');

  a.generations.changed([7]);
  // The change reaches Redis asynchronously; a real writer reports it after its insert.
  for (let i = 0; i < 100 && (await raw.hget(logGenerationKey, 'm:7')) !== '1'; i++) await new Promise((r) => setTimeout(r, 10));
  await read(b, 7, 1);
  t.equal(b.engine.sent, 4, "master 7's read on the other node is fresh");
  await read(b, 8, 2);
  t.equal(b.engine.sent, 4, "master 8's stays cached");
  await read(b, undefined, 3);
  t.equal(b.engine.sent, 5, 'the unfiltered read is fresh');

  a.generations.changed(null); // a deletion or retention: any master
  for (let i = 0; i < 100 && (await raw.hget(logGenerationKey, 'epoch')) !== '1'; i++) await new Promise((r) => setTimeout(r, 10));
  await read(b, 8, 2);
  t.equal(b.engine.sent, 6, 'a change of unknown masters makes every master fresh');
});

t.test('one node: maximum age, entry bound, rejected reads, store down', async (t) => {
  const store = new MemoryStore();
  const n = node(store, { maxEntries: 2, maxAgeMs: 1000 });
  const reader = await n.cache.reader();
  await one(reader, 1);
  clock += 1000;
  await one(reader, 1);
  t.equal(n.engine.sent, 1, 'reused up to its maximum age');
  clock += 1;
  await one(reader, 1);
  t.equal(n.engine.sent, 2, 'read again past it');

  await one(reader, 2);
  await one(reader, 3);
  t.equal(n.cache.size, 2, 'at most maxEntries answers');
  await one(reader, 1);
  t.equal(n.engine.sent, 5, 'the least recently used answer went first');

  const bad = 'SELECT no_such_column';
  await t.rejects(reader.query(bad));
  await t.rejects(reader.query(bad));
  t.equal(n.engine.sent, 7, 'a rejected read is not kept');

  const off = node(store, { maxEntries: 0 });
  await one(await off.cache.reader(), 1);
  await one(await off.cache.reader(), 1);
  t.equal(off.engine.sent, 2, 'maxEntries 0 turns the cache off');

  const down = new MemoryStore();
  const d = node(down);
  await down.close();
  d.generations.changed([1]); // logs a warning, never throws
  await one(await d.cache.reader(1), 1);
  await one(await d.cache.reader(1), 1);
  t.equal(d.engine.sent, 2, 'without the generations every read goes to ClickHouse');
});
