/**
 * One Postgres contract, run against embedded PGlite and a real server.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import t from 'tap';
import { sql } from 'slonik';
import type { Database } from '../../src/storage/postgres/database.js';
import { startEmbedded } from '../../src/storage/postgres/embedded.js';
import { migratePostgres } from '../../src/storage/postgres/migrate.js';
import { openDatabase } from '../../src/storage/postgres/open.js';
import { connectPool } from '../../src/storage/postgres/pool.js';
import { toRfc3339 } from '../../src/storage/postgres/type-parsers.js';

type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const tempDirs: string[] = [];
t.teardown(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A migrations dir whose files exercise multi-statement scripts and numeric (not lexical) order. */
function writeMigrations(dir: string, files: Record<string, string>): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

const MIGRATIONS = {
  '1_items.sql': `
    -- a comment with a 'quote and a $1
    CREATE TABLE items (id bigserial PRIMARY KEY, name text UNIQUE NOT NULL, doc jsonb NOT NULL DEFAULT '{}');
    CREATE INDEX items_doc ON items USING gin (doc);
    CREATE FUNCTION add_one(x int) RETURNS int LANGUAGE sql AS $$ SELECT $1 + 1 $$;
    INSERT INTO items (name, doc) VALUES ('seed', '{"a": "$$"}');
  `,
  '2_events.sql': `
    CREATE TABLE events (id int8 PRIMARY KEY, at timestamptz NOT NULL, local_at timestamp, day date, amount numeric);
    DO $$ BEGIN INSERT INTO events VALUES (1, now(), now(), current_date, 1.5); END $$;
  `,
  '10_later.sql': `ALTER TABLE items ADD COLUMN note text; SELECT add_one(1);`,
  'README.md': 'not a migration',
};

async function contract(t: Tap, open: () => Promise<Database>, migrationsDir: string): Promise<void> {
  const db = await open();
  t.teardown(() => db.close());

  await t.test('migrations apply once, in numeric order', async (t) => {
    t.same(await migratePostgres(db.pool, migrationsDir), ['1_items.sql', '2_events.sql', '10_later.sql']);
    t.same(await migratePostgres(db.pool, migrationsDir), []);
    const rows = await db.pool.any(sql.unsafe`SELECT version, name, applied_at FROM schema_migrations ORDER BY version`);
    t.same(rows.map((r) => [r.version, r.name]), [[1, '1_items.sql'], [2, '2_events.sql'], [10, '10_later.sql']]);
    t.match(rows[0].applied_at, RFC3339);
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT add_one(41)`), 42);
    t.same(await db.pool.oneFirst(sql.unsafe`SELECT doc FROM items WHERE name = 'seed'`), { a: '$$' });
  });

  await t.test('concurrent migrators apply each file once', async (t) => {
    const dir = writeMigrations(tempDir('mig-conc-'), {
      '20_a.sql': 'CREATE TABLE conc_a (x int); INSERT INTO conc_a VALUES (1);',
      '21_b.sql': 'INSERT INTO conc_a VALUES (2);',
    });
    const runs = await Promise.all([migratePostgres(db.pool, dir), migratePostgres(db.pool, dir)]);
    t.same(runs.flat().sort(), ['20_a.sql', '21_b.sql']);
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM conc_a`), 2);
  });

  await t.test('a failing migration rolls back entirely and is not recorded', async (t) => {
    const dir = writeMigrations(tempDir('mig-fail-'), {
      '30_bad.sql': 'CREATE TABLE half_done (x int); SELECT * FROM no_such_table;',
    });
    await t.rejects(migratePostgres(db.pool, dir), /no_such_table/);
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT to_regclass('half_done') IS NULL`), true);
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM schema_migrations WHERE version = 30`), 0);
  });

  await t.test('types: RFC 3339 timestamps, numbers, parsed json, ISO dates', async (t) => {
    const row = await db.pool.one(sql.unsafe`
      SELECT '2026-01-02 03:04:05.678901+01:30'::timestamptz AS tz,
             '2026-01-02 03:04:05'::timestamp AS ts,
             now() AS now,
             ARRAY['2026-01-02T03:04:05Z'::timestamptz] AS tz_array,
             9007199254740991::int8 AS big,
             count(*) AS counted,
             12.25::numeric AS num,
             '{"a": [1, {"b": null}]}'::jsonb AS jb,
             '{"c": true}'::json AS js,
             '2026-01-02'::date AS day,
             current_setting('TimeZone') AS zone
      FROM items`);
    t.equal(row.tz, '2026-01-02T01:34:05.678Z');
    t.equal(row.ts, '2026-01-02T03:04:05.000Z');
    t.match(row.now, RFC3339);
    t.same(row.tz_array, ['2026-01-02T03:04:05.000Z']);
    t.equal(row.big, 9007199254740991);
    t.equal(row.counted, 1);
    t.equal(row.num, 12.25);
    t.same(row.jb, { a: [1, { b: null }] });
    t.same(row.js, { c: true });
    t.equal(row.day, '2026-01-02');
    t.equal(row.zone, 'UTC');
    const ev = await db.pool.one(sql.unsafe`SELECT id, at, local_at, amount FROM events`);
    t.equal(ev.id, 1);
    t.match(ev.at, RFC3339);
    t.match(ev.local_at, RFC3339);
    t.equal(ev.amount, 1.5);
  });

  await t.test('timestamptz stays UTC even if a transaction changes its zone', async (t) => {
    const at = await db.pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`SET LOCAL TimeZone = 'Asia/Kolkata'`);
      return tx.oneFirst(sql.unsafe`SELECT '2026-01-02 03:04:05Z'::timestamptz`);
    });
    t.equal(at, '2026-01-02T03:04:05.000Z');
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT current_setting('TimeZone')`), 'UTC');
  });

  await t.test('transactions roll back on error', async (t) => {
    await t.rejects(
      db.pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`INSERT INTO items (name) VALUES ('thrown')`);
        throw new Error('boom');
      }),
      /boom/,
    );
    await t.rejects(
      db.pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`INSERT INTO items (name) VALUES ('dup')`);
        await tx.query(sql.unsafe`INSERT INTO items (name) VALUES ('dup')`);
      }),
    );
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM items WHERE name IN ('thrown', 'dup')`), 0);
    await db.pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`INSERT INTO items (name) VALUES ('kept')`);
    });
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM items WHERE name = 'kept'`), 1);
  });

  await t.test('parallel queries get their own results', async (t) => {
    const got = await Promise.all(
      Array.from({ length: 40 }, (_, i) => db.pool.oneFirst(sql.unsafe`SELECT ${i}::int8 * 2`)),
    );
    t.same(got, Array.from({ length: 40 }, (_, i) => i * 2));
  });

  await t.test('ping is true, then false after close, without throwing', async (t) => {
    t.equal(await db.ping(), true);
    await db.close();
    const started = Date.now();
    t.equal(await db.ping(), false);
    t.ok(Date.now() - started < 1500, 'ping answers fast after close');
    await db.close(); // idempotent
  });
}

t.test('toRfc3339', async (t) => {
  t.equal(toRfc3339('2026-01-02 03:04:05+00'), '2026-01-02T03:04:05.000Z');
  t.equal(toRfc3339('2026-01-02 03:04:05.1-03'), '2026-01-02T06:04:05.100Z');
  t.equal(toRfc3339('2026-01-02 00:04:05.999999+05:30'), '2026-01-01T18:34:05.999Z');
  t.equal(toRfc3339('0044-03-15 12:00:00+00'), '0044-03-15T12:00:00.000Z');
  t.equal(toRfc3339('infinity'), 'infinity');
  t.equal(toRfc3339('0044-03-15 12:00:00+00 BC'), '0044-03-15 12:00:00+00 BC');
});

t.test('embedded PGlite', async (t) => {
  const dataDir = tempDir('pg-embedded-');
  const migrations = writeMigrations(path.join(dataDir, 'migrations'), MIGRATIONS);

  await t.test('contract', (t) => contract(t, () => openDatabase({ dataDir }), migrations));

  await t.test('data persists across close and reopen of the same dir', async (t) => {
    const db = await openDatabase({ dataDir });
    t.teardown(() => db.close());
    t.equal(db.embedded, true);
    t.match(db.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    t.same(await migratePostgres(db.pool, migrations), []);
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM items WHERE name = 'kept'`), 1);
    // Worker threads open their own pools on the same URL.
    const second = await connectPool(db.url, { maxSize: 2 });
    t.equal(await second.oneFirst(sql.unsafe`SELECT count(*) FROM items WHERE name = 'kept'`), 1);
    await second.end();
  });

  await t.test('a second instance on a dir in use is refused', async (t) => {
    const db = await openDatabase({ dataDir });
    t.teardown(() => db.close());
    await t.rejects(openDatabase({ dataDir }), /already open in this process/);
    await t.rejects(startEmbedded(path.join(dataDir, 'postgres')), /already open/);
    t.equal(await db.ping(), true, 'the first instance is unharmed');
  });

  await t.test('a stale lock from a dead process is taken over', async (t) => {
    const dir = tempDir('pg-stale-');
    fs.writeFileSync(path.join(dir, 'embedded.lock'), '2147483646\n');
    const pg1 = await startEmbedded(dir);
    await pg1.stop();
    t.notOk(fs.existsSync(path.join(dir, 'embedded.lock')), 'lock removed on stop');
  });
});

/** Finds a role that can connect to the `test` database on the local server, or null. */
async function findServer(): Promise<string | null> {
  for (const user of ['root', 'postgres']) {
    const url = `postgres://${user}@127.0.0.1:5432/test`;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
    try {
      await client.connect();
      return url;
    } catch {
      // try the next role
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return null;
}

const adminUrl = await findServer();
const requireServices = process.env.SVC_TEST_REQUIRE_SERVICES === '1';
const skipReal = !adminUrl && !requireServices ? 'Postgres at 127.0.0.1:5432 does not answer' : false;

t.test('real Postgres', { skip: skipReal }, async (t) => {
  if (!adminUrl) {
    t.fail('Postgres at 127.0.0.1:5432 does not answer and SVC_TEST_REQUIRE_SERVICES=1');
    return;
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  const url = adminUrl.replace(/\/test$/, `/${name}`);
  const migrations = writeMigrations(tempDir('pg-real-mig-'), MIGRATIONS);
  const dataDir = tempDir('pg-real-data-');

  await t.test('contract', (t) =>
    contract(
      t,
      async () => {
        const db = await openDatabase({ url, dataDir, maxPoolSize: 4 });
        t.equal(db.embedded, false);
        t.notOk(fs.existsSync(path.join(dataDir, 'postgres')), 'no embedded server when a URL is set');
        return db;
      },
      migrations,
    ),
  );

  await t.test('a caller-set session zone is overridden to UTC', async (t) => {
    const db = await openDatabase({ url: `${url}?options=-c%20TimeZone%3DAsia%2FTokyo`, dataDir });
    t.teardown(() => db.close());
    t.equal(await db.pool.oneFirst(sql.unsafe`SELECT current_setting('TimeZone')`), 'UTC');
  });

  await t.test('opening an unreachable server rejects', async (t) => {
    await t.rejects(openDatabase({ url: 'postgres://root@127.0.0.1:1/test', dataDir }));
  });

  await t.test('ping answers false within ~1 s when the server stops answering', async (t) => {
    // A proxy that can turn into a black hole: connections accepted, never answered.
    let blackHole = false;
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.on('error', () => undefined);
      if (blackHole) return;
      const upstream = net.connect(5432, '127.0.0.1');
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as net.AddressInfo).port;
    const db = await openDatabase({ url: url.replace(':5432/', `:${port}/`), dataDir });
    t.teardown(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    });
    t.equal(await db.ping(), true);
    blackHole = true;
    for (const s of sockets) s.destroy();
    t.equal(await db.ping(), false, 'the pooled connection is gone');
    // Now a new connection is needed and the server never answers it.
    const started = Date.now();
    t.equal(await db.ping(), false, 'a fresh connection hangs');
    const took = Date.now() - started;
    t.ok(took >= 900 && took < 1500, `ping gave up after ${took} ms`);
    await db.close().catch(() => undefined);
  });
});
