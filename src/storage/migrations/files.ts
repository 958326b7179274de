/**
 * Migration files shared by the Postgres and ClickHouse runners: `NNN_name.sql`
 * in numeric order, each with the sha256 of its text, and the check that an
 * applied file was not edited afterwards (its schema would no longer match).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE_PATTERN = /^(\d+)_.+\.sql$/;

export interface MigrationFile {
  version: number;
  /** The file name, e.g. `001_init.sql`; stored in schema_migrations.name. */
  name: string;
  path: string;
  text: string;
  /** sha256 (hex) of `text`. */
  checksum: string;
}

/** A migration problem that must stop start-up; its message is one line naming the file. */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

export function checksumOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function listMigrations(dir: string): MigrationFile[] {
  const files: MigrationFile[] = [];
  for (const name of readdirSync(dir)) {
    const m = FILE_PATTERN.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    const text = readFileSync(path, 'utf8');
    files.push({ version: Number(m[1]), name, path, text, checksum: checksumOf(text) });
  }
  files.sort((a, b) => a.version - b.version);
  for (let i = 1; i < files.length; i++) {
    if (files[i].version === files[i - 1].version) {
      throw new MigrationError(`duplicate migration version ${files[i].version}: ${files[i - 1].name}, ${files[i].name}`);
    }
  }
  return files;
}

/** What schema_migrations holds for one version. */
export interface AppliedMigration {
  name: string;
  /** Null for rows written before checksums were recorded. */
  checksum: string | null;
}

/**
 * Throws if an applied version is now a different file or a file whose text
 * changed since it was applied. Rows without a checksum are not judged here.
 */
export function verifyApplied(files: readonly MigrationFile[], applied: ReadonlyMap<number, AppliedMigration>): void {
  for (const file of files) {
    const row = applied.get(file.version);
    if (!row) continue;
    if (row.name !== file.name) {
      throw new MigrationError(`migration ${file.version} was applied as ${row.name}, but the file is now ${file.name}`);
    }
    if (row.checksum && row.checksum !== file.checksum) {
      throw new MigrationError(
        `migration ${file.path} changed after it was applied (sha256 ${row.checksum.slice(0, 12)} applied, ` +
          `${file.checksum.slice(0, 12)} now): restore the applied text and put the change in a new migration file`,
      );
    }
  }
}
