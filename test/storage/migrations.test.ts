/**
 * Migrations from several nodes at once and after a crash, on a real Postgres
 * and a real chDB: one lock, each file applied once, a checksum per applied
 * file (a changed one stops start-up in one line), a dirty marker that reruns
 * an interrupted ClickHouse file, and the in-place upgrade of old
 * schema_migrations tables without checksums.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { sql, type DatabasePool } from 'slonik';
import t from 'tap';
import { migrateClickHouse } from '../../src/storage/clickhouse/migrate.js';
import type { ClickHouse } from '../../src/storage/clickhouse/client.js';
import { HttpClickHouse } from '../../src/storage/clickhouse/http-transport.js';
import { clickhouseBridged, openTestClickHouse, sharedBridge } from '../helpers/harness.js';
import { checksumOf, MigrationError } from '../../src/storage/migrations/files.js';
import { migratePostgres, withClickHouseMigrationLock } from '../../src/storage/postgres/migrate.js';
import { connectPool } from '../../src/storage/postgres/pool.js';

const mainJs = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const adminUrl = process.env.TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';

const tempDirs: string[] = [];
t.teardown(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});
function writeDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mig-'));
  tempDirs.push(dir);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

/** A fresh database on the local server; returns its URL. */
async function freshDatabase(): Promise<string> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  return adminUrl.replace(/\/[^/]+$/, `/${name}`);
}

/** Two pools on one database: two nodes starting together. */
async function twoNodes(url: string): Promise<[DatabasePool, DatabasePool]> {
  const a = await connectPool(url, { maxSize: 2 });
  const b = await connectPool(url, { maxSize: 2 });
  t.teardown(async () => {
    await a.end();
    await b.end();
  });
  return [a, b];
}

const PG_FILES = {
  '001_a.sql': 'CREATE TABLE counted (n int); INSERT INTO counted VALUES (1);',
  '002_b.sql': 'INSERT INTO counted VALUES (2);',
};

t.test('postgres: two nodes at once apply each file once and record its checksum', async (t) => {
  const [a, b] = await twoNodes(await freshDatabase());
  const dir = writeDir(PG_FILES);
  const runs = await Promise.all([migratePostgres(a, dir), migratePostgres(b, dir)]);
  t.same(runs.flat().sort(), ['001_a.sql', '002_b.sql']);
  t.same(await a.anyFirst(sql.unsafe`SELECT n FROM counted ORDER BY n`), [1, 2]);
  const rows = await a.any(sql.unsafe`SELECT name, checksum FROM schema_migrations ORDER BY version`);
  t.same(rows, [
    { name: '001_a.sql', checksum: checksumOf(PG_FILES['001_a.sql']) },
    { name: '002_b.sql', checksum: checksumOf(PG_FILES['002_b.sql']) },
  ]);

  fs.appendFileSync(path.join(dir, '001_a.sql'), '\n-- edited\n');
  const err = await migratePostgres(a, dir).catch((e: unknown) => e);
  t.ok(err instanceof MigrationError, 'a changed applied file is refused');
  t.match((err as Error).message, /^migration \S*001_a\.sql changed after it was applied \(sha256 [0-9a-f]{12} applied, [0-9a-f]{12} now\)/);
  t.notMatch((err as Error).message, /\n/, 'one line');
});

t.test('postgres: an old schema_migrations without checksums upgrades in place, once', async (t) => {
  const [a] = await twoNodes(await freshDatabase());
  await a.query(sql.unsafe`CREATE TABLE schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  await a.query(sql.unsafe`CREATE TABLE counted (n int)`);
  await a.query(sql.unsafe`INSERT INTO schema_migrations (version, name) VALUES (1, '001_a.sql')`);
  const dir = writeDir(PG_FILES);
  t.same(await migratePostgres(a, dir), ['002_b.sql'], 'the recorded file is not rerun');
  t.same(await a.anyFirst(sql.unsafe`SELECT checksum FROM schema_migrations ORDER BY version`), [
    checksumOf(PG_FILES['001_a.sql']),
    checksumOf(PG_FILES['002_b.sql']),
  ]);
  // Filled once: an edit afterwards is caught, not silently recorded.
  fs.writeFileSync(path.join(dir, '001_a.sql'), 'CREATE TABLE counted (n bigint);');
  await t.rejects(migratePostgres(a, dir), /001_a\.sql changed after it was applied/);
});

t.test('start-up stops with one line naming a changed applied file', async (t) => {
  const url = await freshDatabase();
  const real = fileURLToPath(new URL('../../../sql/postgres', import.meta.url));
  const [a] = await twoNodes(url);
  await migratePostgres(a, real);
  await a.query(sql.unsafe`UPDATE schema_migrations SET checksum = ${'0'.repeat(64)} WHERE version = 1`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mig-main-'));
  tempDirs.push(dataDir);
  const run = spawnSync(process.execPath, [mainJs], {
    env: { ...process.env, SVC_DATABASE_URL: url, SVC_DATA_DIR: dataDir, SVC_REDIS_URL: '', SVC_CLICKHOUSE_URL: '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(run.status, 1);
  const lines = run.stderr.trim().split('\n');
  t.equal(lines.length, 1, run.stderr);
  t.match(lines[0], /^failed to start: migration \S*sql\/postgres\/001_\S+\.sql changed after it was applied/);
});

t.test('clickhouse', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mig-ch-'));
  tempDirs.push(dataDir);
  const base = await openTestClickHouse(dataDir);
  t.teardown(() => base.close());
  const [a, b] = await twoNodes(await freshDatabase());
  let db = 0;
  /**
   * Each case in a database of its own: schema_migrations is unqualified.
   * Over HTTP a database is chosen per request (USE does not last), so a client of its own.
   */
  async function useFresh(): Promise<ClickHouse> {
    const name = `mig_${++db}`;
    if (clickhouseBridged) {
      const ch = new HttpClickHouse({ url: await (await sharedBridge()).database(name) });
      t.teardown(() => ch.close());
      return ch;
    }
    await base.command(`CREATE DATABASE ${name}`);
    await base.command(`USE ${name}`);
    return base;
  }
  const CH_FILES = {
    '001_a.sql': 'CREATE TABLE IF NOT EXISTS counted (n UInt32) ENGINE = MergeTree ORDER BY n;\nINSERT INTO counted VALUES (1);\n',
    '002_b.sql': 'CREATE TABLE IF NOT EXISTS b1 (n UInt32) ENGINE = MergeTree ORDER BY n;\nCREATE TABLE IF NOT EXISTS b2 (n UInt32) ENGINE = MergeTree ORDER BY n;\n',
  };

  await t.test('two nodes at once, under the Postgres lock, apply each file once', async (t) => {
    const ch = await useFresh();
    const dir = writeDir(CH_FILES);
    const runs = await Promise.all(
      [a, b].map((pool) => migrateClickHouse(ch, dir, { lock: (fn) => withClickHouseMigrationLock(pool, fn) })),
    );
    t.same(runs.flat().sort(), ['001_a.sql', '002_b.sql']);
    t.same(await ch.query('SELECT n FROM counted'), [{ n: 1 }], 'the INSERT ran once');
    t.same(
      await ch.query('SELECT version, name, checksum FROM schema_migrations ORDER BY version'),
      [
        { version: 1, name: '001_a.sql', checksum: checksumOf(CH_FILES['001_a.sql']) },
        { version: 2, name: '002_b.sql', checksum: checksumOf(CH_FILES['002_b.sql']) },
      ],
    );
    fs.appendFileSync(path.join(dir, '002_b.sql'), '-- edited\n');
    await t.rejects(migrateClickHouse(ch, dir), MigrationError);
    await t.rejects(migrateClickHouse(ch, dir), /002_b\.sql changed after it was applied/);
  });

  await t.test('a dirty marker left by a crash reruns that file, which heals', async (t) => {
    const ch = await useFresh();
    const dir = writeDir({ '001_a.sql': CH_FILES['001_a.sql'] });
    t.same(await migrateClickHouse(ch, dir), ['001_a.sql']);
    // The crash: 002 marked started, its first statement ran, the second did not, nothing recorded.
    fs.writeFileSync(path.join(dir, '002_b.sql'), CH_FILES['002_b.sql']);
    await ch.insert('schema_migrations_dirty', JSON.stringify({ version: 2, name: '002_b.sql' }) + '\n');
    await ch.command('CREATE TABLE b1 (n UInt32) ENGINE = MergeTree ORDER BY n');
    const reruns: string[] = [];
    t.same(await migrateClickHouse(ch, dir, { onRerun: (f) => reruns.push(f) }), ['002_b.sql']);
    t.same(reruns, ['002_b.sql'], 'the rerun is reported');
    t.same(await ch.query("SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'b_' ORDER BY name"), [
      { name: 'b1' },
      { name: 'b2' },
    ]);
    t.same(await ch.query('SELECT count() AS c FROM schema_migrations_dirty'), [{ c: 0 }], 'marker cleared');
    const again: string[] = [];
    t.same(await migrateClickHouse(ch, dir, { onRerun: (f) => again.push(f) }), []);
    t.same(again, [], 'no rerun once finished');
  });

  await t.test('an old schema_migrations without checksums upgrades in place, once', async (t) => {
    const ch = await useFresh();
    await ch.command('CREATE TABLE schema_migrations (version UInt32, name String, applied_at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY version');
    await ch.command('CREATE TABLE counted (n UInt32) ENGINE = MergeTree ORDER BY n');
    await ch.insert('schema_migrations', JSON.stringify({ version: 1, name: '001_a.sql' }) + '\n');
    const dir = writeDir(CH_FILES);
    t.same(await migrateClickHouse(ch, dir), ['002_b.sql']);
    t.same(await ch.query('SELECT count() AS c FROM counted'), [{ c: 0 }], '001 not rerun');
    t.same(
      await ch.query('SELECT version, max(checksum) AS checksum FROM schema_migrations GROUP BY version ORDER BY version'),
      [
        { version: 1, checksum: checksumOf(CH_FILES['001_a.sql']) },
        { version: 2, checksum: checksumOf(CH_FILES['002_b.sql']) },
      ],
    );
    fs.writeFileSync(path.join(dir, '001_a.sql'), 'SELECT 1;\n');
    await t.rejects(migrateClickHouse(ch, dir), /001_a\.sql changed after it was applied/);
  });
  if (!clickhouseBridged) await base.command('USE gateway');
});
