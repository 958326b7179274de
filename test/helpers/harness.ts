/**
 * Starts the whole service in-process for a test file, over a real socket,
 * against real stores: this machine's Postgres (a fresh database per service)
 * and Redis (db 15) when they answer, the embedded ones otherwise, chDB in a
 * temporary directory. With SVC_TEST_REQUIRE_SERVICES=1 (CI) a missing
 * Postgres or Redis fails the run instead of falling back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';
import type { Config } from '../../src/config/settings.js';

export const adminToken = 'test-admin-token';
export const internalToken = 'test-internal-token';
const pgAdminUrl = process.env.TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const required = process.env.SVC_TEST_REQUIRE_SERVICES === '1';

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
    ...opts.env,
  };
  const config = loadConfig(env);
  const log = pino({ level: config.logLevel });
  const service = await startService(config, log);
  const base = `http://127.0.0.1:${service.port}`;
  let stopped = false;
  return {
    service,
    base,
    config,
    dataDir,
    usingPostgres: usePg,
    usingRedis: useRedis,
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
