/**
 * One SharedStore contract, run against the memory store and real Redis (the
 * db of TEST_REDIS_URL, as in the harness, so parallel runs each flush only
 * their own), plus Redis outage behaviour through a proxy that can be cut and
 * stalled.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { globToRegExp, MemoryStore } from '../../src/storage/redis/memory-store.js';
import { openStore } from '../../src/storage/redis/open.js';
import type { SharedStore, StoreOp } from '../../src/storage/redis/store.js';

type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const redisTarget = new URL(REDIS_URL);

/** The same server, db and credentials, reached through a local proxy port. */
function viaProxy(port: number): string {
  const url = new URL(REDIS_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check()` is true, polling; false after `ms`. */
async function eventually(check: () => boolean | Promise<boolean>, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(20);
  }
  return check();
}

async function elapsed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: PromiseSettledResult<T> }> {
  const started = Date.now();
  const [result] = await Promise.allSettled([fn()]);
  return { ms: Date.now() - started, result };
}

/** Every key matching `pattern` with its value, whatever its type (sets sorted). */
async function dump(store: SharedStore, pattern: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of (await store.scan(pattern)).sort()) {
    out[key] = await store.get(key).catch(() =>
      store.hgetall(key).catch(async () => (await store.smembers(key)).sort()),
    );
  }
  return out;
}

async function contract(t: Tap, store: SharedStore): Promise<void> {
  // Pub/sub is not scoped to a Redis db: keep channel names unique per run.
  const ns = `c${randomBytes(4).toString('hex')}`;

  await t.test('strings: set, get, del', async (t) => {
    t.equal(await store.get('s:missing'), null);
    await store.apply([{ op: 'set', key: 's:a', value: 'one' }]);
    t.equal(await store.get('s:a'), 'one');
    await store.apply([{ op: 'set', key: 's:a', value: 'two' }]);
    t.equal(await store.get('s:a'), 'two');
    await store.apply([{ op: 'del', key: 's:a' }, { op: 'del', key: 's:never' }]);
    t.equal(await store.get('s:a'), null);
  });

  await t.test('hashes: hset, hget, hgetall, hdel, hincrby', async (t) => {
    t.same(await store.hgetall('h:missing'), {});
    t.equal(await store.hget('h:missing', 'f'), null);
    await store.apply([{ op: 'hset', key: 'h:a', fields: { x: '1', y: '2' } }]);
    t.equal(await store.hget('h:a', 'x'), '1');
    t.equal(await store.hget('h:a', 'nope'), null);
    await store.apply([{ op: 'hset', key: 'h:a', fields: { y: '3', z: '4' } }]);
    t.same(await store.hgetall('h:a'), { x: '1', y: '3', z: '4' });
    await store.apply([{ op: 'hdel', key: 'h:a', fields: ['x', 'nope'] }]);
    t.same(await store.hgetall('h:a'), { y: '3', z: '4' });
    await store.apply([
      { op: 'hincrby', key: 'h:n', field: 'count', by: 5 },
      { op: 'hincrby', key: 'h:n', field: 'count', by: -7 },
      { op: 'hincrby', key: 'h:a', field: 'y', by: 10 },
    ]);
    t.equal(await store.hget('h:n', 'count'), '-2', 'a missing field starts at 0');
    t.equal(await store.hget('h:a', 'y'), '13');
    await store.apply([{ op: 'hdel', key: 'h:n', fields: ['count'] }]);
    t.same(await store.scan('h:n'), [], 'a hash left empty is deleted');
  });

  await t.test('sets: sadd, smembers, srem', async (t) => {
    t.same(await store.smembers('set:missing'), []);
    await store.apply([{ op: 'sadd', key: 'set:a', members: ['m1', 'm2', 'm1'] }]);
    t.same((await store.smembers('set:a')).sort(), ['m1', 'm2']);
    await store.apply([{ op: 'srem', key: 'set:a', members: ['m1', 'zz'] }]);
    t.same(await store.smembers('set:a'), ['m2']);
    await store.apply([{ op: 'srem', key: 'set:a', members: ['m2'] }]);
    t.same(await store.scan('set:a'), [], 'a set left empty is deleted');
  });

  await t.test('apply runs ops in order', async (t) => {
    await store.apply([
      { op: 'set', key: 'o:k', value: '1' },
      { op: 'del', key: 'o:k' },
      { op: 'set', key: 'o:k', value: '2' },
      { op: 'hset', key: 'o:h', fields: { f: '10' } },
      { op: 'hincrby', key: 'o:h', field: 'f', by: 1 },
      { op: 'sadd', key: 'o:s', members: ['a'] },
      { op: 'srem', key: 'o:s', members: ['a'] },
      { op: 'sadd', key: 'o:s', members: ['b'] },
      { op: 'del', key: 'o:s2' },
      { op: 'sadd', key: 'o:s2', members: ['c'] },
    ]);
    t.equal(await store.get('o:k'), '2');
    t.equal(await store.hget('o:h', 'f'), '11');
    t.same(await store.smembers('o:s'), ['b']);
    t.same(await store.smembers('o:s2'), ['c']);
  });

  await t.test('apply: empty batches and empty ops are no-ops', async (t) => {
    await store.apply([]);
    await store.apply([
      { op: 'hset', key: 'e:h', fields: {} },
      { op: 'hdel', key: 'e:h', fields: [] },
      { op: 'sadd', key: 'e:s', members: [] },
      { op: 'srem', key: 'e:s', members: [] },
    ]);
    t.same(await store.scan('e:*'), []);
  });

  await t.test('apply: a malformed op rejects the whole batch before anything runs', async (t) => {
    await t.rejects(
      store.apply([
        { op: 'set', key: 'bad:k', value: 'v' },
        { op: 'hincrby', key: 'bad:h', field: 'f', by: 1.5 },
      ]),
      /not an integer/,
    );
    t.equal(await store.get('bad:k'), null);
  });

  await t.test('a failed batch: the memory store undoes it all, Redis keeps what ran before the failure', async (t) => {
    // The failure comes last, so on Redis every earlier op has run: `after` is what it leaves.
    const failing = [
      { name: 'WRONGTYPE', op: { op: 'sadd', key: 'rb:str', members: ['x'] }, error: /WRONGTYPE/ },
      { name: 'not an integer', op: { op: 'hincrby', key: 'rb:text', field: 'f', by: 1 }, error: /not an integer/ },
      { name: 'overflow', op: { op: 'hincrby', key: 'rb:text', field: 'big', by: 1 }, error: /overflow/ },
    ] as const;
    const setup: StoreOp[] = [
      { op: 'set', key: 'rb:str', value: 'guard' },
      { op: 'hset', key: 'rb:text', fields: { f: 'text', big: '9223372036854775807' } },
    ];
    const scenarios: Array<{ name: string; before: StoreOp[]; batch: StoreOp[]; after: Record<string, unknown> }> = [
      {
        name: 'hash fields: changed, added, deleted, incremented, the hash emptied',
        before: [
          { op: 'hset', key: 'rb:h1', fields: { a: '1', b: '2', n: '10' } },
          { op: 'hset', key: 'rb:h2', fields: { only: 'x' } },
        ],
        batch: [
          { op: 'hset', key: 'rb:h1', fields: { a: '9', c: '3' } },
          { op: 'hdel', key: 'rb:h1', fields: ['b', 'missing'] },
          { op: 'hincrby', key: 'rb:h1', field: 'n', by: 5 },
          { op: 'hincrby', key: 'rb:h1', field: 'n', by: 5 },
          { op: 'hset', key: 'rb:h1', fields: { a: '10' } },
          { op: 'hdel', key: 'rb:h2', fields: ['only'] },
          { op: 'hincrby', key: 'rb:h3', field: 'new', by: 1 },
        ],
        after: { 'rb:h1': { a: '10', c: '3', n: '20' }, 'rb:h3': { new: '1' } },
      },
      {
        name: 'set members: added, removed, the set emptied',
        before: [
          { op: 'sadd', key: 'rb:s1', members: ['m1', 'm2'] },
          { op: 'sadd', key: 'rb:s2', members: ['only'] },
        ],
        batch: [
          { op: 'sadd', key: 'rb:s1', members: ['m3', 'm1'] },
          { op: 'srem', key: 'rb:s1', members: ['m2', 'missing'] },
          { op: 'sadd', key: 'rb:s1', members: ['m2'] },
          { op: 'srem', key: 'rb:s1', members: ['m2'] },
          { op: 'srem', key: 'rb:s2', members: ['only'] },
          { op: 'sadd', key: 'rb:s3', members: ['new'] },
        ],
        after: { 'rb:s1': ['m1', 'm3'], 'rb:s3': ['new'] },
      },
      {
        name: 'deletions of every type, and of a missing key',
        before: [
          { op: 'set', key: 'rb:k', value: 'v' },
          { op: 'hset', key: 'rb:h', fields: { f: '1' } },
          { op: 'sadd', key: 'rb:s', members: ['m'] },
        ],
        batch: [
          { op: 'hset', key: 'rb:h', fields: { g: '2' } },
          { op: 'del', key: 'rb:k' },
          { op: 'del', key: 'rb:h' },
          { op: 'del', key: 'rb:s' },
          { op: 'del', key: 'rb:missing' },
        ],
        after: {},
      },
      {
        name: 'replaced keys: a new value, a new type, deleted and written again',
        before: [
          { op: 'set', key: 'rb:k', value: 'old' },
          { op: 'hset', key: 'rb:h', fields: { f: '1', g: '2' } },
          { op: 'sadd', key: 'rb:s', members: ['m'] },
        ],
        batch: [
          { op: 'set', key: 'rb:k', value: 'new' },
          { op: 'set', key: 'rb:k', value: 'newer' },
          { op: 'hset', key: 'rb:h', fields: { f: 'changed in place first' } },
          { op: 'set', key: 'rb:h', value: 'now a string' },
          { op: 'del', key: 'rb:h' },
          { op: 'hset', key: 'rb:h', fields: { fresh: '1' } },
          { op: 'srem', key: 'rb:s', members: ['m'] },
          { op: 'sadd', key: 'rb:s', members: ['other'] },
          { op: 'set', key: 'rb:created', value: 'x' },
        ],
        after: { 'rb:k': 'newer', 'rb:h': { fresh: '1' }, 'rb:s': ['other'], 'rb:created': 'x' },
      },
    ];
    const guards = { 'rb:str': 'guard', 'rb:text': { f: 'text', big: '9223372036854775807' } };
    for (const scenario of scenarios) {
      for (const fail of failing) {
        await t.test(`${scenario.name}; fails on ${fail.name}`, async (t) => {
          const reset = async () =>
            store.apply([...(await store.scan('rb:*')).map((key) => ({ op: 'del' as const, key })), ...setup, ...scenario.before]);
          await reset();
          const before = await dump(store, 'rb:*');
          const heard: string[] = [];
          const unsubscribe = await store.subscribe(`${ns}:rb`, (m) => heard.push(m));
          t.teardown(unsubscribe);
          const batch = [...scenario.batch, { op: 'publish' as const, channel: `${ns}:rb`, message: 'm' }, fail.op as StoreOp];
          await t.rejects(store.apply(batch), fail.error);
          if (store.kind === 'memory') {
            t.same(await dump(store, 'rb:*'), before, 'every key, field and member is as before the batch');
            await sleep(50);
            t.same(heard, [], 'nothing is published');
          } else {
            t.same(await dump(store, 'rb:*'), { ...guards, ...scenario.after }, 'Redis MULTI keeps the ops before the failure');
          }
          await reset();
          await store.apply(scenario.batch);
          t.same(await dump(store, 'rb:*'), { ...guards, ...scenario.after }, 'the same batch without the failure applies whole');
        });
      }
    }
  });

  await t.test('wrong types are refused like Redis', async (t) => {
    await store.apply([{ op: 'set', key: 'w:str', value: 'x' }, { op: 'hset', key: 'w:hash', fields: { f: 'v' } }]);
    await t.rejects(store.hget('w:str', 'f'), /WRONGTYPE/);
    await t.rejects(store.get('w:hash'), /WRONGTYPE/);
    await t.rejects(store.smembers('w:hash'), /WRONGTYPE/);
    await t.rejects(store.apply([{ op: 'sadd', key: 'w:str', members: ['a'] }]), /WRONGTYPE/);
    await t.rejects(store.apply([{ op: 'hincrby', key: 'w:hash', field: 'f', by: 1 }]), /not an integer/);
    // Redis MULTI does not roll back run-time errors; the memory store is all-or-nothing.
    await t.rejects(
      store.apply([
        { op: 'set', key: 'w:partial', value: 'first' },
        { op: 'sadd', key: 'w:str', members: ['a'] },
      ]),
      /WRONGTYPE/,
    );
    t.equal(await store.get('w:partial'), store.kind === 'memory' ? null : 'first');
    // set overwrites any type, as SET does.
    await store.apply([{ op: 'set', key: 'w:hash', value: 'now a string' }]);
    t.equal(await store.get('w:hash'), 'now a string');
  });

  await t.test('scan: glob patterns', async (t) => {
    const keys = ['g:a:1', 'g:a:2', 'g:b:1', 'g:ab', 'g:a:10', 'g:x*y', 'g:c:1'];
    await store.apply(keys.map((key) => ({ op: 'set' as const, key, value: '1' })));
    const scan = async (pattern: string) => (await store.scan(pattern)).sort();
    t.same(await scan('g:*'), [...keys].sort());
    t.same(await scan('g:a:*'), ['g:a:1', 'g:a:10', 'g:a:2']);
    t.same(await scan('g:a:?'), ['g:a:1', 'g:a:2']);
    t.same(await scan('g:?:1'), ['g:a:1', 'g:b:1', 'g:c:1']);
    t.same(await scan('g:[ab]:1'), ['g:a:1', 'g:b:1']);
    t.same(await scan('g:[^a]:1'), ['g:b:1', 'g:c:1']);
    t.same(await scan('g:[a-b]:1'), ['g:a:1', 'g:b:1']);
    t.same(await scan('g:x\\*y'), ['g:x*y']);
    t.same(await scan('g:a'), []);
    t.same(await scan('nothing:*'), []);
  });

  await t.test('scan walks every cursor page exactly once', async (t) => {
    const keys = Array.from({ length: 1200 }, (_, i) => `many:${i}`);
    await store.apply(keys.map((key) => ({ op: 'set' as const, key, value: 'v' })));
    const found = await store.scan('many:*');
    t.equal(found.length, keys.length);
    t.equal(new Set(found).size, keys.length);
  });

  await t.test('pub/sub: delivery in order, fan-out, unsubscribe', async (t) => {
    const a: string[] = [];
    const b: string[] = [];
    const other: string[] = [];
    const unA = await store.subscribe(`${ns}:one`, (m) => a.push(m));
    const unB = await store.subscribe(`${ns}:one`, (m) => b.push(m));
    const unOther = await store.subscribe(`${ns}:two`, (m) => other.push(m));
    await store.apply([
      { op: 'publish', channel: `${ns}:one`, message: 'm1' },
      { op: 'set', key: 'ps:k', value: 'v' },
      { op: 'publish', channel: `${ns}:one`, message: 'm2' },
    ]);
    if (store.kind === 'memory') t.same(a, [], 'delivery is asynchronous');
    t.ok(await eventually(() => a.length === 2 && b.length === 2), 'both subscribers got both messages');
    t.same(a, ['m1', 'm2']);
    t.same(b, ['m1', 'm2']);
    t.same(other, [], 'other channels hear nothing');

    await unA();
    await unA(); // idempotent
    await store.apply([{ op: 'publish', channel: `${ns}:one`, message: 'm3' }]);
    t.ok(await eventually(() => b.length === 3));
    t.same(a, ['m1', 'm2'], 'unsubscribed listener hears nothing more');

    await unB();
    await unOther();
    await store.apply([{ op: 'publish', channel: `${ns}:one`, message: 'm4' }]);
    await sleep(100);
    t.same(b, ['m1', 'm2', 'm3']);
  });

  await t.test('pub/sub: the same function subscribed twice is two subscriptions', async (t) => {
    const got: string[] = [];
    const fn = (m: string) => got.push(m);
    const un1 = await store.subscribe(`${ns}:dup`, fn);
    const un2 = await store.subscribe(`${ns}:dup`, fn);
    await store.apply([{ op: 'publish', channel: `${ns}:dup`, message: 'x' }]);
    t.ok(await eventually(() => got.length === 2));
    await un1();
    await store.apply([{ op: 'publish', channel: `${ns}:dup`, message: 'y' }]);
    t.ok(await eventually(() => got.length === 3));
    await un2();
  });

  await t.test('ping, then close', async (t) => {
    t.equal(await store.ping(), true);
    await store.close();
    t.equal(await store.ping(), false);
    await t.rejects(store.get('s:a'));
    await store.close(); // idempotent
  });
}

t.test('glob translation', async (t) => {
  t.ok(globToRegExp('a*').test('abc'));
  t.ok(globToRegExp('a?c').test('abc'));
  t.notOk(globToRegExp('a?c').test('ac'));
  t.ok(globToRegExp('a.c').test('a.c'));
  t.notOk(globToRegExp('a.c').test('abc'), 'regex characters are literal');
  t.ok(globToRegExp('a[').test('a['), 'an unterminated class is literal');
  t.ok(globToRegExp('*').test('line\nbreak'));
});

t.test('memory store', async (t) => {
  const store = await openStore({});
  t.equal(store.kind, 'memory');
  t.ok(store instanceof MemoryStore);
  await contract(t, store);
});

/** True when Redis answers a PING within a second. */
async function redisAnswers(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const redisUp = await redisAnswers();
const requireServices = process.env.SVC_TEST_REQUIRE_SERVICES === '1';
const skipRedis = !redisUp && !requireServices ? `Redis at ${redisTarget.host} does not answer` : false;

t.test('redis store', { skip: skipRedis }, async (t) => {
  if (!redisUp) {
    t.fail(`Redis at ${redisTarget.host} does not answer and SVC_TEST_REQUIRE_SERVICES=1`);
    return;
  }
  const admin = new Redis(REDIS_URL);
  await admin.flushdb();
  t.teardown(async () => {
    await admin.flushdb();
    await admin.quit();
  });
  const store = await openStore({ url: REDIS_URL });
  t.equal(store.kind, 'redis');
  await contract(t, store);
  t.same(await admin.keys('many:1199'), ['many:1199'], 'the store wrote to the test db');
});

/** A TCP proxy to Redis that can be cut (refusing connections) and stalled (forwarding nothing). */
async function startProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let stalled = false;
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    if (!stalled) {
      client.pipe(upstream);
      upstream.pipe(client);
    }
    pairs.add([client, upstream]);
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    /** Closes the listener and every connection: Redis looks down. */
    cut: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
    restore: () => {
      stalled = false;
      return listen(port);
    },
    /** Keeps connections open but forwards nothing: a partition or a hung server. */
    stall: () => {
      stalled = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
      }
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}

t.test('redis outages', { skip: skipRedis }, async (t) => {
  if (!redisUp) {
    t.fail(`Redis at ${redisTarget.host} does not answer and SVC_TEST_REQUIRE_SERVICES=1`);
    return;
  }
  t.teardown(async () => {
    const admin = new Redis(REDIS_URL);
    await admin.flushdb();
    await admin.quit();
  });

  await t.test('starts with Redis down, reports it, and fails fast', async (t) => {
    const errors: Error[] = [];
    const open = await elapsed(() => openStore({ url: 'redis://127.0.0.1:1', onError: (e) => errors.push(e) }));
    t.equal(open.result.status, 'fulfilled', 'openStore does not throw');
    t.ok(open.ms < 3000, `opened in ${open.ms} ms`);
    const store = (open.result as PromiseFulfilledResult<SharedStore>).value;
    t.teardown(() => store.close());
    t.equal(await store.ping(), false);
    const apply = await elapsed(() => store.apply([{ op: 'set', key: 'k', value: 'v' }]));
    t.equal(apply.result.status, 'rejected', 'apply rejects');
    t.ok(apply.ms < 3000, `apply rejected in ${apply.ms} ms`);
    const get = await elapsed(() => store.get('k'));
    t.equal(get.result.status, 'rejected', 'get rejects');
    t.ok(get.ms < 3000, `get rejected in ${get.ms} ms`);
    const sub = await elapsed(() => store.subscribe('outage', () => undefined));
    t.equal(sub.result.status, 'fulfilled', 'subscribe registers for later');
    t.ok(errors.length > 0, 'connection errors reach onError');
    const close = await elapsed(() => store.close());
    t.ok(close.ms < 1000, `closed in ${close.ms} ms`);
  });

  await t.test('recovers after an outage and resubscribes', async (t) => {
    const proxy = await startProxy(redisTarget);
    t.teardown(() => proxy.close());
    const store = await openStore({ url: viaProxy(proxy.port), onError: () => undefined });
    t.teardown(() => store.close());
    const publisher = new Redis(REDIS_URL);
    t.teardown(() => publisher.quit());
    const channel = `recover:${randomBytes(4).toString('hex')}`;
    const got: string[] = [];
    await store.subscribe(channel, (m) => got.push(m));
    await publisher.publish(channel, 'before');
    t.ok(await eventually(() => got.length === 1), 'subscribed before the outage');

    await proxy.cut();
    t.equal(await store.ping(), false, 'down while cut');
    const apply = await elapsed(() => store.apply([{ op: 'set', key: 'outage:k', value: 'lost' }]));
    t.equal(apply.result.status, 'rejected');
    t.ok(apply.ms < 3000, `apply rejected in ${apply.ms} ms`);

    await proxy.restore();
    t.ok(await eventually(() => store.ping(), 5000), 'reconnects within the capped backoff');
    t.equal(await publisher.get('outage:k'), null, 'the rejected write was not replayed on reconnect');
    await store.apply([{ op: 'set', key: 'outage:k', value: 'after' }]);
    t.equal(await publisher.get('outage:k'), 'after');
    t.ok(
      await eventually(async () => {
        await publisher.publish(channel, 'after');
        return got.includes('after');
      }, 5000),
      'the subscription is restored',
    );
  });

  await t.test('a hung server does not hang callers', async (t) => {
    const proxy = await startProxy(redisTarget);
    t.teardown(() => proxy.close());
    const store = await openStore({ url: viaProxy(proxy.port), onError: () => undefined });
    t.teardown(() => store.close());
    t.equal(await store.ping(), true);
    proxy.stall();
    const ping = await elapsed(() => store.ping());
    t.equal((ping.result as PromiseFulfilledResult<boolean>).value, false);
    t.ok(ping.ms < 1500, `ping gave up after ${ping.ms} ms`);
    const apply = await elapsed(() => store.apply([{ op: 'set', key: 'hung:k', value: 'v' }]));
    t.equal(apply.result.status, 'rejected');
    t.ok(apply.ms < 3000, `apply rejected in ${apply.ms} ms`);
  });

  await t.test('a write in flight when the connection drops rejects and is not re-sent', async (t) => {
    const proxy = await startProxy(redisTarget);
    t.teardown(() => proxy.close());
    const store = await openStore({ url: viaProxy(proxy.port), onError: () => undefined });
    t.teardown(() => store.close());
    const reader = new Redis(REDIS_URL);
    t.teardown(() => reader.quit());
    proxy.stall();
    const pending = elapsed(() => store.apply([{ op: 'set', key: 'inflight:k', value: 'v' }]));
    await sleep(100);
    await proxy.cut();
    const apply = await pending;
    t.equal(apply.result.status, 'rejected');
    t.ok(apply.ms < 1000, `rejected on the drop, after ${apply.ms} ms, not at the command timeout`);
    await proxy.restore();
    t.ok(await eventually(() => store.ping(), 5000), 'reconnected');
    await sleep(200);
    t.equal(await reader.get('inflight:k'), null);
  });
});
