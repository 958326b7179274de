/**
 * Applies `NNN_name.sql` files in numeric order, each once, recording them in
 * schema_migrations. ClickHouse has no transactional DDL, so a file that fails
 * halfway is not recorded: write statements with IF NOT EXISTS so a rerun heals.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClickHouse } from './client.js';

export async function migrateClickHouse(ch: ClickHouse, dir: string): Promise<string[]> {
  await ch.command(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version UInt32, name String, applied_at DateTime DEFAULT now()
  ) ENGINE = MergeTree ORDER BY version`);
  const done = new Set(
    (await ch.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version),
  );
  const applied: string[] = [];
  for (const { version, name } of migrationFiles(dir)) {
    if (done.has(version)) continue;
    for (const stmt of splitStatements(readFileSync(join(dir, name), 'utf8'))) await ch.command(stmt);
    await ch.insert('schema_migrations', JSON.stringify({ version, name }) + '\n');
    applied.push(name);
  }
  return applied;
}

function migrationFiles(dir: string): { version: number; name: string }[] {
  const files: { version: number; name: string }[] = [];
  for (const name of readdirSync(dir)) {
    const m = /^(\d+)_.+\.sql$/.exec(name);
    if (m) files.push({ version: Number(m[1]), name });
  }
  files.sort((a, b) => a.version - b.version);
  for (let i = 1; i < files.length; i++) {
    if (files[i].version === files[i - 1].version) throw new Error(`duplicate migration version: ${files[i].name}`);
  }
  return files;
}

/** Statements end with `;` at the end of a line; comment-only chunks are dropped. */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;[ \t]*\r?$/m)
    .map((s) => s.trim())
    .filter((s) => s.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('--')));
}
