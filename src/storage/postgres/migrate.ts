/**
 * Schema migrations: `NNN_name.sql` files applied in numeric order, each once,
 * each in its own transaction under an advisory lock (nodes starting together
 * queue on it), recorded in `schema_migrations` with the sha256 of the text; an
 * applied file whose text changed stops start-up.
 */
import { sql, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { listMigrations, verifyApplied, type AppliedMigration, type MigrationFile } from '../migrations/files.js';

/** Arbitrary constant shared by every node: they queue on it instead of migrating twice. */
const LOCK_KEY = 7_305_241_918;

/** A query token for a raw string: slonik only accepts frozen template-strings arrays. */
function rawQuery(text: string) {
  const strings = Object.freeze(Object.assign([text], { raw: Object.freeze([text]) }));
  return sql.unsafe(strings as unknown as TemplateStringsArray);
}

/**
 * Wraps a multi-statement script into ONE statement. slonik refuses results of
 * several statements ("Must not use multiple statements in a single query"),
 * and the extended protocol cannot parse them at all, but PL/pgSQL's EXECUTE
 * runs a string of several commands in order, each parsed after the previous
 * one ran. Works the same on Postgres and PGlite. Limits: no COPY FROM STDIN,
 * no transaction control, no `SELECT ... INTO` (use CREATE TABLE AS).
 */
function asSingleStatement(script: string): string {
  let tag = 'migration';
  while (script.includes(`$${tag}$`) || script.includes(`$${tag}_do$`)) tag += '_';
  return `DO $${tag}_do$ BEGIN EXECUTE $${tag}$${script}$${tag}$; END $${tag}_do$`;
}

async function lock(tx: DatabaseTransactionConnection): Promise<void> {
  // Transaction-scoped: released by COMMIT/ROLLBACK, and safe on PGlite where all connections share one session.
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${LOCK_KEY})`);
}

/**
 * Creates or upgrades schema_migrations, fills the checksums of rows written
 * before checksums existed from the current files (once: afterwards no row
 * lacks one), and returns what is applied.
 */
async function appliedVersions(pool: DatabasePool, files: readonly MigrationFile[]): Promise<Map<number, AppliedMigration>> {
  return pool.transaction(async (tx) => {
    await lock(tx);
    // Under the lock: two nodes racing on CREATE TABLE IF NOT EXISTS can still collide.
    await tx.query(sql.unsafe`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version int PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    await tx.query(sql.unsafe`ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text`);
    const rows = await tx.any(sql.unsafe`SELECT version, name, checksum FROM schema_migrations`);
    const applied = new Map(
      rows.map((r) => [r.version as number, { name: r.name as string, checksum: (r.checksum as string | null) ?? null }]),
    );
    for (const file of files) {
      const row = applied.get(file.version);
      if (!row || row.checksum !== null || row.name !== file.name) continue;
      await tx.query(sql.unsafe`UPDATE schema_migrations SET checksum = ${file.checksum} WHERE version = ${file.version}`);
      row.checksum = file.checksum;
    }
    return applied;
  });
}

/** Applies the pending migrations of `dir`; returns the file names applied, in order. */
export async function migratePostgres(pool: DatabasePool, dir: string): Promise<string[]> {
  const files = listMigrations(dir);
  const applied = await appliedVersions(pool, files);
  verifyApplied(files, applied);
  const done: string[] = [];
  for (const file of files) {
    if (applied.has(file.version)) continue;
    const script = file.text;
    const ran = await pool.transaction(async (tx) => {
      await lock(tx);
      // Another node may have applied it while we waited for the lock.
      const exists = await tx.maybeOneFirst(
        sql.unsafe`SELECT name FROM schema_migrations WHERE version = ${file.version}`,
      );
      if (exists !== null) return false;
      // Migrations may legitimately run longer than the pool's statement timeout.
      await tx.query(sql.unsafe`SET LOCAL statement_timeout = 0`);
      if (script.trim() !== '') await tx.query(rawQuery(asSingleStatement(script)));
      await tx.query(
        sql.unsafe`INSERT INTO schema_migrations (version, name, checksum) VALUES (${file.version}, ${file.name}, ${file.checksum})`,
      );
      return true;
    });
    if (ran) done.push(file.name);
  }
  return done;
}

/** Key of the lock under which every node migrates the shared ClickHouse. */
const CLICKHOUSE_LOCK_KEY = 7_305_241_919;

/**
 * Runs `fn` holding a Postgres advisory lock taken in a transaction that stays
 * open meanwhile: the lock for migrating ClickHouse, which has none that works
 * across nodes on both chDB and a server, while every node shares Postgres.
 */
export function withClickHouseMigrationLock<T>(pool: DatabasePool, fn: () => Promise<T>): Promise<T> {
  return pool.transaction(async (tx) => {
    // Waiting for another node's run may outlast the pool's statement timeout.
    await tx.query(sql.unsafe`SET LOCAL statement_timeout = 0`);
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${CLICKHOUSE_LOCK_KEY})`);
    return fn();
  });
}
