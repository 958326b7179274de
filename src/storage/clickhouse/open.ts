/** Picks the transport: a ClickHouse server when a URL is given, else embedded chDB. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { settingSpecs } from '../../config/settings.js';
import { configureChdbAllocator } from './chdb-allocator.js';
import type { ClickHouse } from './client.js';
import { HttpClickHouse } from './http-transport.js';

export interface OpenClickHouseOptions {
  /** ClickHouse HTTP URL; when absent the embedded engine is used. */
  url?: string;
  /** Embedded data lives under `${dataDir}/clickhouse`. */
  dataDir: string;
  /** Embedded: created if missing (default `gateway`). Server: must exist (default: the URL's). */
  database?: string;
  /** Embedded: connections to the engine, so that reads run in parallel (default 1). */
  connections?: number;
  /** Embedded: how long the engine's allocator keeps freed pages (default: the setting's). */
  dirtyDecayMs?: number;
  /** Server: how long a command may keep its socket silent (default COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number;
}

/** Call once per process for the embedded engine (it is a process singleton) and share the result. */
export async function openClickHouse(opts: OpenClickHouseOptions): Promise<ClickHouse> {
  if (opts.url) return new HttpClickHouse({ url: opts.url, database: opts.database, commandTimeoutMs: opts.commandTimeoutMs });

  const database = opts.database ?? 'gateway';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new Error(`invalid database name: ${database}`);
  const path = join(opts.dataDir, 'clickhouse');
  mkdirSync(path, { recursive: true });
  // Loaded only here: importing chdb maps libchdb (~150 MB resident), which a node on a ClickHouse server never needs.
  configureChdbAllocator(opts.dirtyDecayMs ?? settingSpecs.chdbDirtyDecayMs.default);
  const { ChdbClickHouse } = await import('./chdb-transport.js');
  const ch = new ChdbClickHouse(path, opts.connections ?? 1);
  try {
    await ch.command(`CREATE DATABASE IF NOT EXISTS ${database}`);
    await ch.use(database);
  } catch (err) {
    await ch.close();
    throw err;
  }
  return ch;
}
