/**
 * The embedded Postgres's socket server under concurrent pg clients: PGlite
 * is one session, so each connection's protocol exchanges must run whole and
 * transactions one at a time, whatever the other connections send meanwhile.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t from 'tap';
import { startEmbedded } from '../../src/storage/postgres/embedded.js';
import { adminToken, startTestService } from '../helpers/harness.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-embedded-server-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

// A lost or mixed-up exchange shows as a query that never gets its answer: fail it instead of hanging.
const QUERY_TIMEOUT_MS = 10_000;

let embedded = await startEmbedded(dataDir);
t.teardown(() => embedded.stop());
const pool = new pg.Pool({ connectionString: embedded.url, max: 10, query_timeout: QUERY_TIMEOUT_MS });
pool.on('error', () => undefined);

async function withClients<T>(n: number, work: (client: pg.PoolClient, c: number) => Promise<T>): Promise<T[]> {
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
  try {
    return await Promise.all(clients.map((client, c) => work(client, c)));
  } finally {
    for (const client of clients) client.release();
  }
}

/** `count` parameterised queries, each with its own parameters and SQL text per client; the answers that were not their own. */
async function ownAnswers(client: pg.PoolClient, c: number, count: number): Promise<string[]> {
  const wrong: string[] = [];
  for (let i = 0; i < count; i++) {
    // Every 10th carries a parameter large enough to reach the server in several socket reads.
    const text = `${c}:${i}:${i % 10 === 0 ? 'x'.repeat(200_000) : ''}`;
    if (c % 4 === 3 && i % 5 === 0) await client.query('SELECT 1'); // simple protocol in between
    const r = await client.query(`SELECT $1::int AS i, $2::text AS text, ${c} AS c`, [i, text]);
    const row = r.rows[0] as { i: number; text: string; c: number };
    if (r.rows.length !== 1 || row.i !== i || row.text !== text || row.c !== c) wrong.push(`client ${c} query ${i}`);
  }
  return wrong;
}

t.test('concurrent parameterised queries each get their own answer', async (t) => {
  const wrong = await withClients(8, (client, c) => ownAnswers(client, c, 200));
  t.same(wrong.flat(), [], '8 clients x 200 queries');
});

t.test('concurrent transactions see only their own uncommitted rows', async (t) => {
  await pool.query('CREATE TABLE tx_rows (owner int, round int, n int, done bool NOT NULL DEFAULT false)');
  const rounds = 8;
  const rows = 5;
  const problems = await withClients(8, async (client, c) => {
    const seen: string[] = [];
    if (c >= 6) {
      // Outside any transaction: must never run inside another connection's.
      for (let i = 0; i < 60; i++) {
        const r = await client.query('SELECT count(*)::int AS n FROM tx_rows WHERE NOT done AND $1::int >= 0', [i]);
        if (r.rows[0].n !== 0) seen.push(`reader ${c} saw ${r.rows[0].n} uncommitted rows`);
      }
      return seen;
    }
    for (let round = 0; round < rounds; round++) {
      await client.query('BEGIN');
      for (let n = 0; n < rows; n++) await client.query('INSERT INTO tx_rows (owner, round, n) VALUES ($1, $2, $3)', [c, round, n]);
      const own = await client.query('SELECT n FROM tx_rows WHERE owner = $1 AND round = $2 ORDER BY n', [c, round]);
      if (own.rows.map((r) => r.n).join() !== '0,1,2,3,4') seen.push(`owner ${c} round ${round} read back ${JSON.stringify(own.rows)}`);
      const pending = await client.query('SELECT count(*)::int AS n FROM tx_rows WHERE NOT done AND owner <> $1', [c]);
      if (pending.rows[0].n !== 0) seen.push(`owner ${c} saw ${pending.rows[0].n} rows of another's open transaction`);
      if (round % 3 === 2) {
        await client.query('ROLLBACK');
      } else {
        await client.query('UPDATE tx_rows SET done = true WHERE owner = $1 AND round = $2', [c, round]);
        await client.query('COMMIT');
      }
    }
    return seen;
  });
  t.same(problems.flat(), []);
  const counts = await pool.query('SELECT owner, count(*)::int AS n, bool_and(done) AS done FROM tx_rows GROUP BY owner ORDER BY owner');
  const committed = Array.from({ length: rounds }, (_, r) => r).filter((r) => r % 3 !== 2).length;
  t.same(
    counts.rows,
    Array.from({ length: 6 }, (_, c) => ({ owner: c, n: committed * rows, done: true })),
    'committed rounds kept whole, rolled-back ones gone',
  );
});

t.test('a client killed mid-transaction is rolled back and the others go on', async (t) => {
  const victim = new pg.Client({ connectionString: embedded.url, query_timeout: QUERY_TIMEOUT_MS });
  victim.on('error', () => undefined);
  await victim.connect();
  await victim.query('BEGIN');
  await victim.query('INSERT INTO tx_rows (owner, round, n) VALUES ($1, 0, 0)', [-1]);

  let answered = false;
  const waiting = pool.query('SELECT count(*)::int AS n FROM tx_rows WHERE owner = $1', [-1]).then((r) => {
    answered = true;
    return r.rows[0].n as number;
  });
  await sleep(300);
  t.equal(answered, false, 'another connection waits while the transaction is open');

  (victim as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
  t.equal(await waiting, 0, 'it then runs, after the rollback');
  t.equal((await pool.query('SELECT count(*)::int AS n FROM tx_rows WHERE owner = -1')).rows[0].n, 0);
  await pool.query('BEGIN; INSERT INTO tx_rows (owner, round, n, done) VALUES (-2, 0, 0, true); COMMIT');
  t.equal((await pool.query('SELECT count(*)::int AS n FROM tx_rows WHERE owner = $1', [-2])).rows[0].n, 1, 'new transactions commit');
});

t.test('errors inside a unit do not break the next queries', async (t) => {
  const results = await withClients(6, async (client, c) => {
    if (c >= 2) return (await ownAnswers(client, c, 40)).join();
    const errors: string[] = [];
    const failure = async (text: string, values?: unknown[]) => {
      try {
        await client.query(text, values);
        errors.push(`no error from ${text}`);
      } catch (err) {
        errors.push((err as Error).message);
      }
    };
    const answers = async () => {
      const r = await client.query('SELECT $1::int + 1 AS n', [c]);
      if (r.rows[0].n !== c + 1) errors.push('wrong answer after an error');
    };
    for (let i = 0; i < 5; i++) {
      await failure('SELECT $1::int FROM no_such_table', [1]); // fails at Parse
      await answers();
      await failure('SELECT $1::int', ['abc']); // fails at Bind
      await answers();
      await failure('SELECT 1 / ($1::int - $1::int)', [3]); // fails at Execute
      await answers();
      await failure('SELECT 1; SELECT * FROM nope; SELECT 2'); // simple protocol, second statement
      await answers();
      // A failed transaction keeps the session until its ROLLBACK.
      await client.query('BEGIN');
      await failure('SELECT $1::int FROM no_such_table', [1]);
      await failure('SELECT $1::int + 1', [c]);
      await client.query('ROLLBACK');
      await answers();
    }
    return errors.join('\n');
  });
  const expected = [
    'relation "no_such_table" does not exist',
    'invalid input syntax for type integer: "abc"',
    'division by zero',
    'relation "nope" does not exist',
    'current transaction is aborted, commands ignored until end of transaction block',
  ];
  for (const c of [0, 1]) {
    const lines = results[c].split('\n');
    t.equal(lines.length, 30, `client ${c}: every bad statement failed`);
    t.same([...new Set(lines)].sort(), [...expected].sort(), `client ${c}: with its own error`);
  }
  t.same(results.slice(2), ['', '', '', ''], 'the other clients got their own answers meanwhile');
});

/** Reads from a raw socket until `done` says the bytes so far are enough. */
function readUntil(socket: net.Socket, done: (bytes: Buffer) => boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (done(got)) finish();
    };
    const finish = () => {
      socket.off('data', onData);
      socket.off('end', finish);
      socket.off('error', reject);
      resolve(got);
    };
    socket.on('data', onData);
    socket.on('end', finish);
    socket.on('error', reject);
  });
}

function packet(code: number, body = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + body.length, 0);
  head.writeInt32BE(code, 4);
  return Buffer.concat([head, body]);
}

t.test('SSL and GSS encryption are declined, Terminate and CancelRequest close the connection', async (t) => {
  const port = Number(new URL(embedded.url).port);
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let reply = readUntil(socket, (b) => b.length >= 1);
  socket.write(packet(80877103)); // SSLRequest
  t.equal((await reply).toString(), 'N');
  reply = readUntil(socket, (b) => b.length >= 1);
  socket.write(packet(80877104)); // GSSENCRequest
  t.equal((await reply).toString(), 'N');
  // Startup (protocol 3.0), answered up to ReadyForQuery.
  reply = readUntil(socket, (b) => b.includes(Buffer.from([0x5a, 0, 0, 0, 5, 0x49])));
  socket.write(packet(196608, Buffer.from('user\0postgres\0database\0postgres\0\0')));
  t.match((await reply).toString('latin1'), /server_version/);
  // Terminate: the server ends the connection, and the session serves the others.
  const ended = readUntil(socket, () => false);
  socket.write(Buffer.from([0x58, 0, 0, 0, 4]));
  await ended;
  t.equal((await pool.query('SELECT $1::text AS v', ['still here'])).rows[0].v, 'still here');

  const cancel = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => cancel.once('connect', resolve));
  const closed = readUntil(cancel, () => false);
  cancel.write(packet(80877102, Buffer.alloc(8)));
  t.equal((await closed).length, 0, 'a cancel request is not answered');
  cancel.destroy();
  socket.destroy();
});

/** A typed protocol message. */
function message(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const cstr = (s: string): Buffer => Buffer.from(`${s}\0`);

t.test('a client gone between Flush and Sync has its statement rolled back', async (t) => {
  const port = Number(new URL(embedded.url).port);
  for (const [sql, answer] of [
    ['INSERT INTO tx_rows (owner, round, n) VALUES (-5, 0, 0)', /^1\0{3}\x042\0{3}\x04C.*INSERT 0 1/], // ParseComplete, BindComplete, CommandComplete
    ['INSERT INTO no_such_table VALUES (-5)', /^E.*no_such_table/], // the error, then the session skips until a Sync
  ] as const) {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let reply = readUntil(socket, (b) => b.includes(Buffer.from([0x5a, 0, 0, 0, 5, 0x49])));
    socket.write(packet(196608, Buffer.from('user\0postgres\0database\0postgres\0\0')));
    await reply;
    // Extended protocol up to a Flush: answered, but the implicit transaction stays open until Sync.
    reply = readUntil(socket, (b) => b.length > 0);
    socket.write(
      Buffer.concat([
        message('P', cstr(''), cstr(sql), Buffer.alloc(2)),
        message('B', cstr(''), cstr(''), Buffer.alloc(6)),
        message('E', cstr(''), Buffer.alloc(4)),
        message('H'),
      ]),
    );
    t.match((await reply).toString('latin1'), answer, sql);
    let answered = false;
    const waiting = pool.query('SELECT count(*)::int AS n FROM tx_rows WHERE owner = $1', [-5]).then((r) => {
      answered = true;
      return r.rows[0].n as number;
    });
    await sleep(300);
    t.equal(answered, false, 'the others wait for its Sync');
    socket.destroy();
    t.equal(await waiting, 0, 'nothing of it was kept');
  }
  t.equal((await pool.query('SELECT $1::text AS v', ['free'])).rows[0].v, 'free', 'the session is free again');
});

t.test('stop rolls back an open transaction; the dir reopens with the committed data', async (t) => {
  const client = new pg.Client({ connectionString: embedded.url, query_timeout: QUERY_TIMEOUT_MS });
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  await client.query('INSERT INTO tx_rows (owner, round, n) VALUES ($1, 0, 0)', [-3]);
  await pool.end();
  await embedded.stop();

  embedded = await startEmbedded(dataDir, { maxConnections: 2 });
  const again = new pg.Pool({ connectionString: embedded.url, max: 3, query_timeout: QUERY_TIMEOUT_MS });
  t.teardown(() => again.end());
  const r = await again.query('SELECT count(*) FILTER (WHERE owner = -3)::int AS open, count(*)::int AS all FROM tx_rows');
  t.same(r.rows[0], { open: 0, all: 6 * 30 + 1 });

  // maxConnections: the third connection is refused with Postgres's own error.
  const held = await Promise.all([again.connect(), again.connect()]);
  const third = new pg.Client({ connectionString: embedded.url });
  await t.rejects(third.connect(), /too many clients/);
  for (const c of held) c.release();
});

t.test('the service on its embedded stores answers concurrent writes from main thread and worker pools', async (t) => {
  const svc = await startTestService({ embedded: true });
  t.teardown(() => svc.stop());
  t.equal(svc.usingPostgres, false);
  const post = async (path: string, body: unknown) => {
    const res = await fetch(svc.base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
    });
    return { status: res.status, json: (await res.json()) as { id: number; key_secret: string } };
  };
  const master = await post('/admin/masters', { name: 'concurrent', group: 'default', max_child_keys: 1000 });
  t.equal(master.status, 201);
  // Each issue is a transaction (rows + outbox entry) in a worker; the outbox relay reads and deletes on the main thread.
  const statuses = await Promise.all(
    Array.from({ length: 6 }, async () => {
      const got: number[] = [];
      for (let i = 0; i < 40; i++) got.push((await post(`/admin/masters/${master.json.id}/keys`, {})).status);
      return got;
    }),
  );
  t.same([...new Set(statuses.flat())], [201], '240 keys issued by 6 concurrent clients');
  const list = await svc.request('GET', `/admin/masters/${master.json.id}/keys?limit=1`, { token: adminToken });
  t.equal(list.json.total, 240);
});

t.test("PGlite's buffer pool is the setting's size, 32 MB by default (it is resident from the start)", async (t) => {
  const show = async (url: string) => {
    const client = new pg.Client({ connectionString: url, query_timeout: QUERY_TIMEOUT_MS });
    await client.connect();
    try {
      return (await client.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]!.shared_buffers;
    } finally {
      await client.end();
    }
  };
  t.equal(await show(embedded.url), '32MB');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-embedded-buffers-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const other = await startEmbedded(dir, { sharedBuffersMb: 48 });
  t.teardown(() => other.stop());
  t.equal(await show(other.url), '48MB');
});
