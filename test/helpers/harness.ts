/**
 * Starts the whole service in-process for a test file, over a real socket,
 * against real stores: this machine's Postgres (a fresh database per service)
 * and Redis (db 15) when they answer, the embedded ones otherwise, chDB in a
 * temporary directory. With SVC_TEST_REQUIRE_SERVICES=1 (CI) a missing
 * Postgres or Redis fails the run instead of falling back. With
 * SVC_TEST_CLICKHOUSE=bridge the service reaches ClickHouse over HTTP
 * (SVC_CLICKHOUSE_URL) through a bridge that serves ClickHouse's HTTP interface
 * from chDB in a child process (clickhouse-bridge.ts), one database per data
 * directory.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service, type ServiceOptions } from '../../src/service.js';
import type { Config } from '../../src/config/settings.js';
import { HttpClickHouse } from '../../src/storage/clickhouse/http-transport.js';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';
import type { ClickHouse } from '../../src/storage/clickhouse/client.js';
import { spawnClickHouseBridge, type ClickHouseBridge } from './clickhouse-bridge.js';

export const adminToken = 'test-admin-token';
export const internalToken = 'test-internal-token';
const pgAdminUrl = process.env.TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
export const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const required = process.env.SVC_TEST_REQUIRE_SERVICES === '1';
/** ClickHouse over HTTP through the bridge instead of embedded chDB (SVC_TEST_CLICKHOUSE=bridge). */
export const clickhouseBridged = process.env.SVC_TEST_CLICKHOUSE === 'bridge';

let bridge: Promise<ClickHouseBridge> | null = null;
/** One bridge per test process, started when first needed; it exits with the process and removes its files. */
export function sharedBridge(): Promise<ClickHouseBridge> {
  return (bridge ??= spawnClickHouseBridge(mkdtempSync(join(tmpdir(), 'ch-bridge-')), { removeDataDir: true }));
}

/** The bridge URL of the database that stands for a data directory (the same one on a restart with that directory). */
export async function bridgeUrlFor(dataDir: string): Promise<string> {
  return (await sharedBridge()).database(`t_${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
}

/**
 * ClickHouse for a test that drives the store itself: embedded chDB under
 * `dataDir`, or in bridge mode a client of the bridge on a database of its own.
 */
export async function openTestClickHouse(dataDir: string): Promise<ClickHouse> {
  if (!clickhouseBridged) return openClickHouse({ dataDir });
  return new HttpClickHouse({ url: await bridgeUrlFor(dataDir) });
}

export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: pgAdminUrl, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    if (required) throw new Error(`Postgres at ${pgAdminUrl} is required (SVC_TEST_REQUIRE_SERVICES=1) but does not answer`);
    return false;
  }
}

export async function redisAvailable(): Promise<boolean> {
  const r = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1500, retryStrategy: () => null });
  try {
    await r.connect();
    await r.ping();
    return true;
  } catch {
    if (required) throw new Error(`Redis at ${redisUrl} is required (SVC_TEST_REQUIRE_SERVICES=1) but does not answer`);
    return false;
  } finally {
    r.disconnect();
  }
}

/** Creates an empty database on the real server; returns its URL and a dropper. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(pgAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: pgAdminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function flushRedis(): Promise<void> {
  const r = new Redis(redisUrl);
  await r.flushdb();
  r.disconnect();
}

export interface TestService {
  service: Service;
  base: string;
  config: Config;
  dataDir: string;
  usingPostgres: boolean;
  usingRedis: boolean;
  /** ClickHouse reached over HTTP through the bridge. */
  usingBridge: boolean;
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>;
  stop(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string | Buffer;
  token?: string;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Use the embedded stores even when the real ones answer. */
  embedded?: boolean;
  /** Reuse a data directory (restart tests). */
  dataDir?: string;
  /** Reuse a database URL (restart tests). */
  databaseUrl?: string;
  keepData?: boolean;
  /** Another route table (start-up checks). */
  routes?: ServiceOptions['routes'];
}

export async function startTestService(opts: StartOptions = {}): Promise<TestService> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'cp-test-'));
  let dropDb: (() => Promise<void>) | undefined;
  let databaseUrl = opts.databaseUrl;
  const usePg = !opts.embedded && (databaseUrl !== undefined || (await postgresAvailable()));
  if (usePg && !databaseUrl) {
    const db = await freshDatabase();
    databaseUrl = db.url;
    dropDb = opts.keepData ? undefined : db.drop;
  }
  const useRedis = !opts.embedded && (await redisAvailable());
  if (useRedis && !opts.keepData && !opts.dataDir) await flushRedis();
  const clickhouseUrl = clickhouseBridged && !opts.embedded ? await bridgeUrlFor(dataDir) : undefined;
  const env: Record<string, string> = {
    SVC_PORT: '0',
    SVC_HOST: '127.0.0.1',
    SVC_ADMIN_TOKEN: adminToken,
    SVC_INTERNAL_STATS_TOKEN: internalToken,
    SVC_DATA_DIR: dataDir,
    SVC_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SVC_WORKERS: '1',
    SVC_OUTBOX_INTERVAL_MS: '100',
    ...(databaseUrl ? { SVC_DATABASE_URL: databaseUrl } : {}),
    ...(useRedis ? { SVC_REDIS_URL: redisUrl } : {}),
    ...(clickhouseUrl ? { SVC_CLICKHOUSE_URL: clickhouseUrl } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const log = pino({ level: config.logLevel });
  let service: Service;
  try {
    service = await startService(config, log, { routes: opts.routes });
  } catch (err) {
    await dropDb?.();
    if (!opts.keepData && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const base = `http://127.0.0.1:${service.port}`;
  let stopped = false;
  return {
    service,
    base,
    config,
    dataDir,
    usingPostgres: usePg,
    usingRedis: useRedis,
    usingBridge: clickhouseUrl !== undefined,
    request: (method, path, ro = {}) => request(base, method, path, ro),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await service.stop();
      await dropDb?.();
      if (!opts.keepData && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function request(base: string, method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | Buffer | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Polls until `check` returns a truthy value or the time runs out. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5000, stepMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
