/**
 * Applies `NNN_name.sql` files in numeric order, each once, recording them in
 * schema_migrations with the sha256 of their text. ClickHouse has no
 * transactional DDL, so:
 * - the caller passes a lock shared by every node (the service takes a
 *   Postgres advisory lock: every node shares Postgres, and it works the same
 *   with chDB and a server);
 * - a file is marked in schema_migrations_dirty before it runs and unmarked
 *   after it is recorded; a run that finds the mark (a crash halfway) says so
 *   and reruns that file, whose statements are written IF NOT EXISTS so a
 *   rerun heals;
 * - an applied file whose text changed stops start-up.
 * The files make tables; the rollups' materialized views come from
 * rollups.ts only (ensureRollupViews, run after the files under the same lock).
 */
import { listMigrations, verifyApplied, type AppliedMigration } from '../migrations/files.js';
import type { ClickHouse } from './client.js';
import { backfillSql, createMvSql, ROLLUPS, type Rollup } from './rollups.js';

/** Runs `fn` while holding a lock that every node migrating the same ClickHouse shares. */
export type MigrationLock = <T>(fn: () => Promise<T>) => Promise<T>;

export interface ClickHouseMigrateOptions {
  lock?: MigrationLock;
  /** Told when an interrupted file is rerun. */
  onRerun?: (file: string) => void;
  /** The rollups whose views are ensured: rollups.ts's, unless a test stands in an older release's shapes. */
  rollups?: readonly Rollup[];
}

const inProcess: MigrationLock = (fn) => fn();

export async function migrateClickHouse(
  ch: ClickHouse,
  dir: string,
  options: ClickHouseMigrateOptions = {},
): Promise<string[]> {
  const files = listMigrations(dir);
  return (options.lock ?? inProcess)(async () => {
    await ch.command(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version UInt32, name String, applied_at DateTime DEFAULT now()
    ) ENGINE = MergeTree ORDER BY version`);
    // In-place upgrade of tables made before checksums: '' marks a row without one.
    await ch.command(`ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum String DEFAULT ''`);
    await ch.command(`CREATE TABLE IF NOT EXISTS schema_migrations_dirty (
      version UInt32, name String, started_at DateTime DEFAULT now()
    ) ENGINE = MergeTree ORDER BY version`);

    const applied = await appliedMigrations(ch);
    // Rows without a checksum get one from the current file, once (a new row; max() prefers it on read).
    const fill = files.filter((f) => applied.get(f.version)?.checksum === null && applied.get(f.version)?.name === f.name);
    if (fill.length) {
      await ch.insert(
        'schema_migrations',
        fill.map((f) => JSON.stringify({ version: f.version, name: f.name, checksum: f.checksum })).join('\n') + '\n',
      );
      for (const f of fill) applied.get(f.version)!.checksum = f.checksum;
    }
    verifyApplied(files, applied);

    const dirty = await ch.query<{ name: string }>('SELECT name FROM schema_migrations_dirty');
    for (const { name } of dirty) options.onRerun?.(name);

    const done: string[] = [];
    for (const file of files) {
      if (applied.has(file.version)) continue;
      await ch.command('TRUNCATE TABLE schema_migrations_dirty');
      await ch.insert('schema_migrations_dirty', JSON.stringify({ version: file.version, name: file.name }) + '\n');
      for (const stmt of splitStatements(file.text)) await ch.command(stmt);
      await ch.insert(
        'schema_migrations',
        JSON.stringify({ version: file.version, name: file.name, checksum: file.checksum }) + '\n',
      );
      done.push(file.name);
    }
    // Also clears a mark whose file was recorded just before a crash; an up-to-date start with no mark has nothing to clear.
    if (dirty.length || done.length) await ch.command('TRUNCATE TABLE schema_migrations_dirty');
    await ensureRollupViews(ch, options.rollups);
    return done;
  });
}

async function appliedMigrations(ch: ClickHouse): Promise<Map<number, AppliedMigration>> {
  const rows = await ch.query<{ version: number; name: string; checksum: string }>(
    'SELECT version, any(name) AS name, max(checksum) AS checksum FROM schema_migrations GROUP BY version',
  );
  return new Map(rows.map((r) => [Number(r.version), { name: r.name, checksum: r.checksum === '' ? null : r.checksum }]));
}

/** Statements end with `;` at the end of a line; comment-only chunks are dropped. */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;[ \t]*\r?$/m)
    .map((s) => s.trim())
    .filter((s) => s.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('--')));
}

/**
 * Creates each rollup's materialized view from rollups.ts when its table exists
 * and the view does not, backfilling the table from `logs` first (TRUNCATE,
 * then INSERT SELECT; the view comes last, so a crash in between leaves the
 * view missing and the next start redoes both). Runs before any ingest, so no
 * record reaches a table through both the backfill and the view. To change a
 * view, a migration drops it (and reshapes its table): the next start rebuilds it.
 */
export async function ensureRollupViews(ch: ClickHouse, rollups: readonly Rollup[] = ROLLUPS): Promise<string[]> {
  const rows = await ch.query<{ name: string }>(
    'SELECT name FROM system.tables WHERE database = currentDatabase() AND has({names:Array(String)}, name)',
    { names: rollups.flatMap((r) => [r.table, r.mv]) },
  );
  const present = new Set(rows.map((r) => r.name));
  const made: string[] = [];
  // The grains of a shared table have one view: every grain is backfilled before it is made.
  const byView = new Map<string, Rollup[]>();
  for (const r of rollups) byView.set(r.mv, [...(byView.get(r.mv) ?? []), r]);
  for (const [mv, group] of byView) {
    if (!present.has(group[0]!.table) || present.has(mv)) continue;
    for (const r of group) for (const sql of backfillSql(r)) await ch.command(sql);
    await ch.command(createMvSql(group[0]!, group));
    made.push(mv);
  }
  return made;
}
