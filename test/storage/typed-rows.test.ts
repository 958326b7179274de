/**
 * Rows typed by their query (src/storage/postgres/result-parser.ts): a query
 * written `sql.type(schema)` answers rows its schema parsed, a row that breaks
 * the schema fails where it is read, and untyped queries are unchanged. The
 * alert queries are the pattern: a stored row the domain could not have written
 * is refused, not handed on. Real Postgres.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { sql, SchemaValidationError, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { freshDatabase, postgresAvailable } from '../helpers/harness.js';
import { connectPool } from '../../src/storage/postgres/pool.js';
import { migratePostgres } from '../../src/storage/postgres/migrate.js';
import {
  alertCounts,
  getAlert,
  insertAlert,
  listAlerts,
  readThresholds,
  readWebhookConfig,
} from '../../src/storage/postgres/alerts.js';
import { thresholdDefaults, webhookDefaults } from '../../src/actors/alerts/values.js';
import { getMaster, insertMaster, listMasters } from '../../src/storage/postgres/tenancy.js';
import { findGroup, insertGroup, listGroups } from '../../src/storage/postgres/upstreams.js';
import { groupsByIds } from '../../src/storage/postgres/routing.js';
import { enqueueEntries, pendingEntries } from '../../src/storage/postgres/outbox.js';

if (!(await postgresAvailable())) {
  t.fail('Postgres is not reachable at TEST_PG_URL (or 127.0.0.1:5432)');
  process.exit(1);
}

const database = await freshDatabase();
const pool: DatabasePool = await connectPool(database.url, { maxSize: 2 });
await migratePostgres(pool, fileURLToPath(new URL('../../../sql/postgres', import.meta.url)));
t.teardown(async () => {
  await pool.end();
  await database.drop();
});

const at = '2026-11-25T10:00:00.000Z';

t.test('a typed query answers the rows its schema parsed', async (t) => {
  const row = await pool.one(sql.type(z.object({ n: z.number().int(), s: z.string() }))`SELECT 7::int AS n, 'x' AS s`);
  t.same(row, { n: 7, s: 'x' });
  // The schema decides the shape: a column it does not declare is dropped.
  const narrowed = await pool.one(sql.type(z.object({ n: z.number() }))`SELECT 1::int AS n, 2::int AS extra`);
  t.same(narrowed, { n: 1 });
});

t.test('a row that breaks its type fails where it is read', async (t) => {
  const err = await pool.one(sql.type(z.object({ n: z.number() }))`SELECT 'seven' AS n`).catch((e: unknown) => e);
  t.ok(err instanceof SchemaValidationError, 'slonik SchemaValidationError');
  const e = err as SchemaValidationError;
  t.match(e.sql, /SELECT 'seven' AS n/, 'names the query');
  t.same(e.issues.map((i) => i.path), [['n']], 'names the field');
  t.same(e.row, { n: 'seven' }, 'carries the row as read');
});

t.test('untyped queries pass their rows unchanged', async (t) => {
  t.same(await pool.one(sql.unsafe`SELECT 'seven' AS n, 2::int AS extra`), { n: 'seven', extra: 2 });
});

t.test('alert rows are typed by their queries', async (t) => {
  const inserted = await insertAlert(
    pool,
    { type: 'custom', severity: 'warning', fingerprint: 'typed-1', message: 'm', metadata: { a: [1] }, master_id: 42, source: 'admin' },
    at,
  );
  t.ok(inserted);
  const read = await getAlert(pool, inserted!.id);
  t.same(read, {
    id: inserted!.id,
    type: 'custom',
    severity: 'warning',
    status: 'active',
    fingerprint: 'typed-1',
    message: 'm',
    metadata: { a: [1] },
    master_id: 42,
    source: 'admin',
    occurrences: 1,
    last_seen_at: at,
    acknowledged_at: null,
    resolved_at: null,
    dismissed_at: null,
    createdAt: at,
    updatedAt: at,
  });
  t.equal(typeof read!.id, 'number', 'bigserial id as a number');
  const page = await listAlerts(pool, {}, 10, 0);
  t.equal(page.total, 1);
  t.same(page.items, [read]);
  t.same(await alertCounts(pool), [{ status: 'active', severity: 'warning', n: 1 }]);

  const th = await readThresholds(pool, thresholdDefaults);
  t.match(th, { ...thresholdDefaults, updatedAt: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/ });
  const wh = await readWebhookConfig(pool, webhookDefaults);
  t.match(wh, { ...webhookDefaults, updatedAt: String });
});

t.test('free-form metadata comes back as it was stored, every key kept', async (t) => {
  const metadata = JSON.parse('{"__proto__": {"x": 1}, "constructor": 2, "nested": {"a": [1, null]}}') as Record<string, unknown>;
  const inserted = await insertAlert(
    pool,
    { type: 'custom', severity: 'info', fingerprint: 'typed-3', message: '', metadata, master_id: null, source: 'admin' },
    at,
  );
  const read = await getAlert(pool, inserted!.id);
  // jsonb orders keys by length, then bytes.
  t.same(Object.keys(read!.metadata), ['nested', '__proto__', 'constructor'], 'every key, __proto__ included, as an own key');
  t.same(Object.getOwnPropertyDescriptor(read!.metadata, '__proto__')?.value, { x: 1 });
  t.equal(read!.metadata.constructor, 2);
  t.same(read!.metadata.nested, { a: [1, null] });
  await pool.query(sql.unsafe`DELETE FROM alerts WHERE id = ${inserted!.id}`);
});

t.test('a stored alert the domain could not have written is refused, not handed on', async (t) => {
  const id = await pool.oneFirst(sql.type(z.object({ id: z.number() }))`
    INSERT INTO alerts (type, severity, fingerprint, message, metadata, source, last_seen_at, created_at, updated_at)
    VALUES ('custom', 'apocalyptic', 'typed-2', '', '{}', 'admin', now(), now(), now()) RETURNING id`);
  const err = await getAlert(pool, id).catch((e: unknown) => e);
  t.ok(err instanceof SchemaValidationError, 'reading it fails');
  t.same((err as SchemaValidationError).issues.map((i) => i.path), [['severity']], 'on the severity');
  const refused = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);
  t.ok((await refused(listAlerts(pool, {}, 10, 0))) instanceof SchemaValidationError, 'a list that holds it fails too');
  t.ok((await refused(alertCounts(pool))) instanceof SchemaValidationError, 'so do the counts');
});

t.test('the other domains read typed rows: exactly the declared fields, as declared', async (t) => {
  const m = await insertMaster(pool, { name: 'typed', group: 'g', keyDigest: 'd'.repeat(64), keyPrefix: 'mk-ty', maxChildKeys: 3, globalQps: 0 });
  t.same(Object.keys(m).sort(), [
    'allowed_namespaces', 'budget', 'budget_period', 'budget_period_start', 'budget_used', 'child_keys', 'created_at',
    'default_namespace', 'deleted_at', 'epoch', 'global_qps', 'group', 'has_digest', 'id', 'key_prefix', 'max_child_keys',
    'name', 'status', 'updated_at',
  ]);
  t.match(m, { id: Number, budget: null, budget_used: '0.000000000000', allowed_namespaces: [], child_keys: 0, deleted_at: null });
  t.same(await getMaster(pool, m.id), m);
  t.same((await listMasters(pool, { offset: 0, limit: 10 })).rows, [m]);

  const g = await insertGroup(pool, { name: 'typed-g', type: 'openai', base_url: 'https://x.example', models: ['a'], static_headers: { h: 'v' } });
  t.match(g, { models: ['a'], static_headers: { h: 'v' }, deletedAt: { time: null, valid: false } });
  t.notOk('deleted_at' in g, 'deleted_at leaves as deletedAt');
  t.same(await findGroup(pool, g.id), g);
  t.same((await listGroups(pool, { page: 1, limit: 10 })).items, [g]);
});

t.test('a stored value another domain could not have written is refused where it is read', async (t) => {
  const refused = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);
  // jsonb takes any JSON; a group's static headers are an object.
  const id = await pool.oneFirst(sql.type(z.object({ id: z.number() }))`
    INSERT INTO provider_groups (name, type, base_url, static_headers) VALUES ('bad-headers', 'openai', 'https://x', '[1]') RETURNING id`);
  const err = await refused(findGroup(pool, id));
  t.ok(err instanceof SchemaValidationError, 'the admin read fails');
  t.same((err as SchemaValidationError).issues.map((i) => i.path), [['static_headers']], 'on the headers');
  t.ok((await refused(groupsByIds(pool, [id]))) instanceof SchemaValidationError, 'so does the routing read that would publish them');
  await pool.query(sql.unsafe`DELETE FROM provider_groups WHERE id = ${id}`);

  // An outbox entry whose operations are not a list fails as a typed error, not inside the unpacking.
  await pool.query(sql.unsafe`DELETE FROM outbox`);
  await enqueueEntries(pool, [[{ op: 'set', key: 'k', value: 'v' }]]);
  t.same((await pendingEntries(pool, 10)).entries.map((e) => e.ops), [[{ op: 'set', key: 'k', value: 'v' }]], 'a good entry reads back');
  await pool.query(sql.unsafe`UPDATE outbox SET ops = '{"op":"set"}'`);
  const bad = await refused(pendingEntries(pool, 10));
  t.ok(bad instanceof SchemaValidationError, 'a bad one is refused');
  t.same((bad as SchemaValidationError).issues.map((i) => i.path), [['ops']]);
  await pool.query(sql.unsafe`DELETE FROM outbox`);
});
