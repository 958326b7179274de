/**
 * The outbox's queries on the real embedded Postgres: rows pack runs of
 * single-field HSETs (outbox-pack.ts) and what the relay reads back is exactly
 * what was enqueued, in order (rows written before packing too); several
 * entries go in with one insert; delivery deletes and raises the version.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { sql } from 'slonik';
import { startEmbedded } from '../../src/storage/postgres/embedded.js';
import { migratePostgres } from '../../src/storage/postgres/migrate.js';
import { connectPool } from '../../src/storage/postgres/pool.js';
import { deleteEntries, enqueueEntries, markDelivered, pendingEntries } from '../../src/storage/postgres/outbox.js';
import { packOps, unpackOps } from '../../src/storage/postgres/outbox-pack.js';
import type { StoreOp } from '../../src/storage/redis/store.js';

const quota = (hash: string, used: number): StoreOp => ({ op: 'hset', key: `tenancy:token:${hash}`, fields: { quota_used: String(used) } });
const hashes = Array.from({ length: 600 }, (_, i) => i.toString(16).padStart(64, '0'));

const mixed: StoreOp[] = [
  { op: 'set', key: 'a', value: '1' },
  ...hashes.slice(0, 300).map((h, i) => quota(h, i * 7)),
  { op: 'hset', key: 'tenancy:master:1', fields: { epoch: '2', status: 'active' } },
  quota(hashes[0]!, 1), // a run too short to pack
  { op: 'hset', key: 'x:1', fields: { other: 'v' } },
  { op: 'hset', key: 'x:2', fields: { other: '' } },
  { op: 'hset', key: 'y', fields: { other: 'w' } },
  { op: 'hset', key: 'x:3', fields: { other: 'z' } }, // a run whose keys share no prefix beyond ''
  { op: 'hset', key: 'h', fields: {} },
  ...hashes.slice(300).map((h, i) => quota(h, i)),
  { op: 'hincrby', key: 'n', field: 'c', by: 3 },
  { op: 'publish', channel: 'gateway:config', message: '{"kind":"quota","at":1}' },
];

t.test('pack then unpack gives the same operations in the same order', async (t) => {
  const packed = packOps(mixed);
  t.same(unpackOps(packed), mixed);
  t.equal(packed.filter((p) => p.op === 'hset-run').length, 3, 'the two quota runs and the `other` run are packed');
  t.ok(JSON.stringify(packed).length < 0.6 * JSON.stringify(mixed).length, 'packed rows are smaller');
  t.same(packOps([]), []);
});

type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

async function database(t: Tap) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cp-outbox-pack-'));
  const embedded = await startEmbedded(path.join(dir, 'postgres'));
  const pool = await connectPool(embedded.url);
  t.teardown(async () => {
    await pool.end();
    await embedded.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await migratePostgres(pool, fileURLToPath(new URL('../../../sql/postgres', import.meta.url)));
  return pool;
}

t.test('enqueued operations come back from the database as they went in, old rows too', async (t) => {
  const pool = await database(t);

  const old: StoreOp[] = hashes.slice(0, 10).map((h, i) => quota(h, i));
  await pool.query(sql.unsafe`INSERT INTO outbox (ops) VALUES (${sql.jsonb(old as never)})`);
  await pool.transaction((tx) => enqueueEntries(tx, [mixed]));
  const { entries, blocked } = await pendingEntries(pool, 10);
  t.notOk(blocked);
  t.same(entries.map((e) => e.ops), [old, mixed]);
  const stored = await pool.oneFirst(sql.unsafe`SELECT ops::text FROM outbox WHERE id = ${entries[1]!.id}`);
  t.ok((stored as string).length < 0.6 * JSON.stringify(mixed).length, 'the row holds the packed form');
  await deleteEntries(pool, entries.map((e) => e.id));
  t.same((await pendingEntries(pool, 10)).entries, []);
});

t.test('several entries in one insert keep their order; delivery deletes them and only raises the version', async (t) => {
  const pool = await database(t);
  const entry = (n: number): StoreOp[] => [{ op: 'set', key: `k${n}`, value: String(n) }];
  await pool.transaction((tx) => enqueueEntries(tx, [entry(1), [], entry(2), entry(3)]));
  const { entries } = await pendingEntries(pool, 10);
  t.same(entries.map((e) => e.ops), [entry(1), entry(2), entry(3)], 'empty entries are skipped');
  t.ok(entries[0]!.id < entries[1]!.id && entries[1]!.id < entries[2]!.id, 'ids follow the order given');
  const version = async () => Number(await pool.oneFirst(sql.unsafe`SELECT version FROM config_state WHERE id = 1`));
  await markDelivered(pool, [entries[0]!.id, entries[1]!.id], 1000);
  t.equal(await version(), 1000);
  t.same((await pendingEntries(pool, 10)).entries.map((e) => e.id), [entries[2]!.id]);
  await markDelivered(pool, [entries[2]!.id], 999);
  t.equal(await version(), 1000, 'never lowered');
  t.same((await pendingEntries(pool, 10)).entries, [], 'deleted all the same');
});
