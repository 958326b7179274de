/**
 * A log store with N rows already in it, seeded through SQL (one INSERT ...
 * SELECT FROM numbers(): dashboards.ts, seed) and kept for the next run.
 * The directory is keyed by the row count and a checksum of the ClickHouse
 * migrations, so a schema change seeds afresh while a second run on the same
 * schema starts in seconds. It has the layout of SVC_DATA_DIR (the store under
 * `clickhouse/`), so the service can start on a copy of it.
 *
 * Where: BENCH_SEED_DIR, else `seeded/` under BENCH_DATA_DIR or the system's
 * temporary directory. `meta.json` is written last: a directory without it is
 * an interrupted seed and is seeded again.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { listMigrations } from '../../storage/migrations/files.js';
import { seed } from '../scenarios/dashboards.js';
import { benchDataDir, repoPath } from './paths.js';

export interface SeededStore {
  /** A directory shaped as SVC_DATA_DIR; read it in place, or copy() it before writing. */
  dir: string;
  rows: number;
  /** The seeded rows end here (Unix seconds) and span the 30 days before. */
  endSec: number;
  /** Seconds the seed took (when it was made: a reused store reports the original figure). */
  seedSeconds: number;
  /** Bytes of the ClickHouse directory once seeded. */
  bytes: number;
  reused: boolean;
}

/** sha256 over the ClickHouse migrations' names and texts: a new or changed migration makes a new store. */
export function migrationsChecksum(): string {
  const h = createHash('sha256');
  for (const m of listMigrations(repoPath('sql/clickhouse'))) h.update(`${m.name}\n${m.checksum}\n`);
  return h.digest('hex').slice(0, 16);
}

/** Bytes under a directory (du: what the files take on disk). */
export function diskBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

/**
 * Bumped when the seed itself changes (not the schema), so that a store seeded the old way is not reused.
 * 2: `logs` merged too. 3: replaced parts deleted while seeding (its disk figure no longer counts them).
 */
const SEED_VERSION = 's3';

const seedRoot = (): string => process.env.BENCH_SEED_DIR || join(process.env.BENCH_DATA_DIR || tmpdir(), 'seeded');

/**
 * The seeded store of `rows` rows, made if missing: the views fill the rollups,
 * and OPTIMIZE FINAL on `logs` and the rollups stands for the merges a real history has had.
 * Open it only in a process with no other chDB open (chDB is one per process).
 */
export async function seededStore(rows: number): Promise<SeededStore> {
  const dir = join(seedRoot(), `logs-${rows}-${migrationsChecksum()}-${SEED_VERSION}`);
  const metaFile = join(dir, 'meta.json');
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Omit<SeededStore, 'dir' | 'reused'>;
    process.stdout.write(`seeded store reused: ${dir} (${rows} rows, seeded in ${meta.seedSeconds.toFixed(1)} s, ${(meta.bytes / 1e6).toFixed(0)} MB)\n`);
    return { ...meta, dir, reused: true };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // Whole minutes, so that reruns of the same seed are byte-identical in time.
  const endSec = Math.floor(Date.now() / 60_000) * 60;
  const started = performance.now();
  const { insertS, optimizeS } = await seed(dir, rows, endSec);
  process.stdout.write(`seeded ${rows} rows in ${insertS.toFixed(1)} s, rollups merged in ${optimizeS.toFixed(1)} s\n`);
  const seedSeconds = (performance.now() - started) / 1000;
  const bytes = diskBytes(join(dir, 'clickhouse'));
  writeFileSync(metaFile, `${JSON.stringify({ rows, endSec, seedSeconds, bytes }, null, 2)}\n`);
  process.stdout.write(`seeded store made: ${dir} (${rows} rows in ${seedSeconds.toFixed(1)} s, ${(bytes / 1e6).toFixed(0)} MB, ${((bytes / rows) * 1e6 / 1e6).toFixed(1)} MB per million rows)\n`);
  return { dir, rows, endSec, seedSeconds, bytes, reused: false };
}

/**
 * A writable copy of a seeded store in a fresh bench directory, made of hard
 * links (seconds, no extra disk): ClickHouse never rewrites a part's files, it
 * writes new parts and renames metadata into place. Its insert deduplication
 * logs are the exception: appended in place, so they are copied, or every
 * insert into a copy would be recorded in the kept store too, and an identical
 * block inserted into a later copy dropped as a repeat. Remove it with rmSync when done.
 */
export function copyOfStore(store: SeededStore): string {
  const dir = benchDataDir('cp-bench-seeded-');
  const from = join(store.dir, 'clickhouse');
  const to = join(dir, 'clickhouse');
  execFileSync('cp', ['-al', from, to]);
  const logs = execFileSync('find', [to, '-type', 'd', '-name', 'deduplication_logs'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const linked of logs) {
    rmSync(linked, { recursive: true });
    cpSync(join(from, relative(to, linked)), linked, { recursive: true });
  }
  return dir;
}
