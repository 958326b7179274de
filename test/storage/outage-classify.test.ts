/**
 * Which driver errors are store outages: real errors from the real drivers
 * (a refused connection, a reply error), not shapes written by hand.
 */
import t from 'tap';
import pg from 'pg';
import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { classifyStoreError, isConnectionFailure } from '../../src/storage/outage.js';
import { connectPool } from '../../src/storage/postgres/pool.js';
import { AppError } from '../../src/errors.js';
import { postgresAvailable, redisAvailable } from '../helpers/harness.js';

t.test('a refused connection is an outage; a typed error passes unchanged', async (t) => {
  const client = new pg.Client({ connectionString: 'postgres://root@127.0.0.1:1/test', connectionTimeoutMillis: 1000 });
  const refused = await client.connect().then(() => null, (e: unknown) => e);
  t.ok(isConnectionFailure(refused), 'ECONNREFUSED from pg');
  const classified = classifyStoreError('postgres', refused) as AppError;
  t.equal(classified.code, 'unavailable');
  t.same(classified.data, { store: 'postgres' });
  t.ok(Number(classified.headers?.['Retry-After']) > 0);
  const typed = new AppError('not_found', 'x');
  t.equal(classifyStoreError('postgres', typed), typed);
  t.notOk(isConnectionFailure(new Error('boom')));
});

t.test('Postgres errors the server answers are not outages', async (t) => {
  if (!(await postgresAvailable())) return t.plan(0, 'needs the real Postgres');
  const pool = await connectPool(process.env.TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test', { maxSize: 1 });
  t.teardown(() => pool.end());
  const syntax = await pool.query(sql.unsafe`SELEC 1`).then(() => null, (e: unknown) => e);
  t.notOk(syntax instanceof AppError, 'a syntax error stays what it is');
  t.notOk(isConnectionFailure(syntax));
  const division = await pool.query(sql.unsafe`SELECT 1/0`).then(() => null, (e: unknown) => e);
  t.notOk(isConnectionFailure(division));
});

t.test('a Redis reply error is not an outage', async (t) => {
  if (!(await redisAvailable())) return t.plan(0, 'needs the real Redis');
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15');
  t.teardown(() => redis.disconnect());
  await redis.set('outage-classify:string', 'x');
  const wrongType = await redis.hgetall('outage-classify:string').then(() => null, (e: unknown) => e);
  t.ok(wrongType, 'WRONGTYPE');
  t.notOk(isConnectionFailure(wrongType));
  await redis.del('outage-classify:string');
});
