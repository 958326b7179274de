/**
 * Schema migrations: `NNN_name.sql` files applied in numeric order, each once,
 * each in its own transaction, recorded in `schema_migrations`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';

const FILE_PATTERN = /^(\d+)_(.+)\.sql$/;

/** Arbitrary constant shared by every node: they queue on it instead of migrating twice. */
const LOCK_KEY = 7_305_241_918;

interface MigrationFile {
  version: number;
  /** The file name, e.g. `001_init.sql`; stored in schema_migrations.name. */
  name: string;
  path: string;
}

async function listMigrations(dir: string): Promise<MigrationFile[]> {
  const files: MigrationFile[] = [];
  for (const name of await fs.readdir(dir)) {
    const m = FILE_PATTERN.exec(name);
    if (m) files.push({ version: Number(m[1]), name, path: path.join(dir, name) });
  }
  files.sort((a, b) => a.version - b.version);
  for (let i = 1; i < files.length; i++) {
    if (files[i].version === files[i - 1].version) {
      throw new Error(`duplicate migration version ${files[i].version}: ${files[i - 1].name}, ${files[i].name}`);
    }
  }
  return files;
}

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

async function appliedVersions(pool: DatabasePool): Promise<Map<number, string>> {
  return pool.transaction(async (tx) => {
    await lock(tx);
    // Under the lock: two nodes racing on CREATE TABLE IF NOT EXISTS can still collide.
    await tx.query(sql.unsafe`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version int PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const rows = await tx.any(sql.unsafe`SELECT version, name FROM schema_migrations`);
    return new Map(rows.map((r) => [r.version as number, r.name as string]));
  });
}

/** Applies the pending migrations of `dir`; returns the file names applied, in order. */
export async function migratePostgres(pool: DatabasePool, dir: string): Promise<string[]> {
  const files = await listMigrations(dir);
  const applied = await appliedVersions(pool);
  const done: string[] = [];
  for (const file of files) {
    const recorded = applied.get(file.version);
    if (recorded !== undefined) {
      if (recorded !== file.name) {
        throw new Error(`migration ${file.version} was applied as ${recorded}, but the file is now ${file.name}`);
      }
      continue;
    }
    const script = await fs.readFile(file.path, 'utf8');
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
        sql.unsafe`INSERT INTO schema_migrations (version, name) VALUES (${file.version}, ${file.name})`,
      );
      return true;
    });
    if (ran) done.push(file.name);
  }
  return done;
}
