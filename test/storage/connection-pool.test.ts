/**
 * The pool the chDB transport lends its connections from, on plain objects:
 * how many it opens, who gets a connection given back, and what a failed open
 * leaves behind. The transport's own tests (chdb-connections, clickhouse-stream)
 * drive it with the engine.
 */
import t from 'tap';
import { ConnectionPool } from '../../src/storage/clickhouse/connection-pool.js';

type Conn = { id: number };

/** A pool whose opens count themselves and settle when the test says so. */
function pool(size: number, opened: Conn[] = []) {
  let next = opened.length;
  const opening: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  const p = new ConnectionPool<Conn>(
    size,
    () =>
      new Promise<Conn>((resolve, reject) => {
        const conn = { id: next++ };
        opening.push({ resolve: () => resolve(conn), reject });
      }),
    opened,
  );
  return { p, opening };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

t.test('connections opened up front are lent before any new one is opened', async (t) => {
  const { p, opening } = pool(3, [{ id: 0 }, { id: 1 }]);
  const a = await p.take();
  const b = await p.take();
  t.same([a.id, b.id].sort(), [0, 1]);
  t.equal(opening.length, 0, 'nothing opened while one was idle');
  const c = p.take();
  t.equal(opening.length, 1, 'the third take opens one');
  opening[0]!.resolve();
  t.same(await c, { id: 2 });
  t.equal(p.all.length, 3);
});

t.test('takes racing for the last slot open it once; the others wait', async (t) => {
  const { p, opening } = pool(1);
  const first = p.take();
  const second = p.take();
  t.equal(opening.length, 1, 'one open for two takes on a pool of one');
  opening[0]!.resolve();
  const conn = await first;
  let gotSecond = false;
  void second.then(() => (gotSecond = true));
  await tick();
  t.notOk(gotSecond, 'the second waits while the first holds the connection');
  p.give(conn);
  t.equal(await second, conn, 'and gets it when it is given back');
});

t.test('a connection given back goes to the caller waiting longest', async (t) => {
  const { p } = pool(1, [{ id: 0 }]);
  const held = await p.take();
  const order: string[] = [];
  const waiting = ['a', 'b', 'c'].map((name) => p.take().then((conn) => (order.push(name), conn)));
  p.give(held);
  const a = await waiting[0]!;
  p.give(a);
  const b = await waiting[1]!;
  p.give(b);
  await waiting[2];
  t.same(order, ['a', 'b', 'c']);
});

t.test('a connection given back with no one waiting is idle for the next take', async (t) => {
  const { p, opening } = pool(2, [{ id: 0 }]);
  const conn = await p.take();
  p.give(conn);
  t.equal(await p.take(), conn);
  t.equal(opening.length, 0);
});

t.test('a failed open frees its slot, and a caller queued behind it opens in its place', async (t) => {
  const { p, opening } = pool(1);
  const first = p.take();
  const second = p.take();
  opening[0]!.reject(new Error('engine refused'));
  await t.rejects(first, /engine refused/, 'the caller whose open failed gets the error');
  t.equal(opening.length, 2, 'the waiting caller opens again');
  opening[1]!.resolve();
  t.same(await second, { id: 1 });
  t.equal(p.all.length, 1, 'the failed connection is not counted');
});
