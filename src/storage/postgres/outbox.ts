/**
 * Queries of the retry outbox (sql/postgres/001_foundation.sql). Domain actors
 * enqueue inside their own transaction; the relay claims, delivers, and marks.
 */
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { idRow, int, noRows, time, total } from './row-types.js';
import type { StoreOp } from '../redis/store.js';
import { configChange, type ChangeKind } from '../redis/layout.js';
import { packOps, unpackOps, type PackedOp } from './outbox-pack.js';

/** Advisory lock key of the relay ("outbox" in ASCII). */
const relayLock = 0x6f7574626f78;
/** Advisory lock key of snapshot starts ("snapsh" in ASCII). */
const snapshotLock = 0x736e61707368;

/**
 * Runs `deliver` on one connection holding the relay's advisory lock (the connection's, not a transaction's), so that
 * one control-plane node relays at a time (two relays interleaving could
 * re-apply an older entry after a newer one); does nothing while another
 * node holds it.
 */
export async function withRelayLock(pool: DatabasePool, deliver: (db: CommonQueryMethods) => Promise<void>): Promise<void> {
  await pool.connect(async (conn) => {
    if (!(await conn.oneFirst(sql.type(z.object({ locked: z.boolean() }))`SELECT pg_try_advisory_lock(${relayLock}) AS locked`))) return;
    try {
      await deliver(conn);
    } finally {
      await conn.query(sql.unsafe`SELECT pg_advisory_unlock(${relayLock})`);
    }
  });
}

/** Serializes snapshot starts for the rest of the transaction: two nodes noticing an empty store start one. */
export async function lockSnapshotStart(tx: CommonQueryMethods): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${snapshotLock})`);
}

/** An entry as stored: its operations packed (./outbox-pack.ts), checked to be a list; unpacking reads each. */
const pendingRow = z.object({ id: int, ops: z.custom<PackedOp[]>(Array.isArray, { message: 'must be a list of operations' }), attempts: int, due: z.boolean() });

export interface OutboxEntry {
  id: number;
  ops: StoreOp[];
  attempts: number;
}

/** Outbox entries stay small enough for one MULTI each. */
const CHUNK = 500;

/**
 * A change's store operations as entries of at most 500, announced on the
 * config channel by the last entry with `ids` (left out past 1,000:
 * subscribers then assume anything changed). With `idsPerOp`, ops[i] is the
 * write of ids[i] and every entry announces the ids of its own ops, so a
 * change of any size names everything it wrote (a quota change: the keys
 * whose quota_used it set).
 */
export function changeEntries(kind: ChangeKind, at: number, ops: StoreOp[], ids?: Array<number | string>, idsPerOp = false): StoreOp[][] {
  const entries: StoreOp[][] = [];
  for (let i = 0; i < ops.length; i += CHUNK) {
    const chunk = ops.slice(i, i + CHUNK);
    if (idsPerOp) chunk.push(configChange(kind, at, ids!.slice(i, i + CHUNK)));
    else if (i + CHUNK >= ops.length) chunk.push(configChange(kind, at, ids && ids.length <= 1000 ? ids : undefined));
    entries.push(chunk);
  }
  return entries;
}

/** Queues `changeEntries` in one statement; their ids. */
export function enqueueChange(db: CommonQueryMethods, kind: ChangeKind, at: number, ops: StoreOp[], ids?: Array<number | string>, idsPerOp = false): Promise<number[]> {
  return enqueueEntries(db, changeEntries(kind, at, ops, ids, idsPerOp));
}

/** Several entries, delivered in the order given, in one statement; their ids. */
export async function enqueueEntries(db: CommonQueryMethods, entries: StoreOp[][]): Promise<number[]> {
  const rows = entries.filter((ops) => ops.length > 0).map((ops) => sql.fragment`(${sql.jsonb(packOps(ops) as never)})`);
  if (rows.length === 0) return [];
  return [...(await db.anyFirst(sql.type(idRow)`INSERT INTO outbox (ops) VALUES ${sql.join(rows, sql.fragment`, `)} RETURNING id`))];
}

/** How many of these entries are still waiting (delivered entries are deleted; dead ones never will be). */
export async function undelivered(db: CommonQueryMethods, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  return db.oneFirst(sql.type(total)`SELECT count(*)::int AS total FROM outbox WHERE id = ANY(${sql.array(ids, 'int8')}) AND NOT dead`);
}

/** The oldest live entries, in delivery order; stops at the first one not yet due so order is kept. */
export async function pendingEntries(db: CommonQueryMethods, limit: number): Promise<{ entries: OutboxEntry[]; blocked: boolean }> {
  const rows = await db.any(sql.type(pendingRow)`
    SELECT id, ops, attempts, next_attempt_at <= now() AS due
    FROM outbox WHERE NOT dead ORDER BY id LIMIT ${limit}`);
  const entries: OutboxEntry[] = [];
  for (const r of rows) {
    if (!r.due) return { entries, blocked: true };
    entries.push({ id: r.id, ops: unpackOps(r.ops), attempts: r.attempts });
  }
  return { entries, blocked: false };
}

export async function deleteEntries(db: CommonQueryMethods, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(noRows`DELETE FROM outbox WHERE id = ANY(${sql.array(ids, 'int8')})`);
}

/**
 * Deletes delivered entries and raises the configuration version to `version`
 * (never lowers it: sql/postgres/005), in one statement.
 */
export async function markDelivered(db: CommonQueryMethods, ids: number[], version: number): Promise<void> {
  if (ids.length === 0) return;
  await db.query(noRows`
    WITH gone AS (DELETE FROM outbox WHERE id = ANY(${sql.array(ids, 'int8')}))
    UPDATE config_state SET version = ${version}, updated_at = now() WHERE id = 1 AND version < ${version}`);
}

export async function recordFailure(
  db: CommonQueryMethods,
  id: number,
  error: string,
  retryInMs: number,
  dead: boolean,
): Promise<void> {
  await db.query(noRows`
    UPDATE outbox SET attempts = attempts + 1, last_error = ${error.slice(0, 500)},
      next_attempt_at = now() + ${`${retryInMs} milliseconds`}::interval, dead = ${dead}
    WHERE id = ${id}`);
}

const outboxStateRow = z.object({ pending: int, dead: int, retrying: int, oldest_pending_at: time.nullable() });
export type OutboxState = z.infer<typeof outboxStateRow>;

export async function outboxState(db: CommonQueryMethods): Promise<OutboxState> {
  return db.one(sql.type(outboxStateRow)`
    SELECT count(*) FILTER (WHERE NOT dead)::int AS pending,
           count(*) FILTER (WHERE dead)::int AS dead,
           count(*) FILTER (WHERE NOT dead AND attempts > 0)::int AS retrying,
           min(created_at) FILTER (WHERE NOT dead) AS oldest_pending_at
    FROM outbox`);
}

/** Whether an undelivered entry SETs one of `keys` (plain SETs are never packed, so containment finds them). */
export async function pendingSetOf(db: CommonQueryMethods, keys: string[]): Promise<boolean> {
  const probes = keys.map((key) => sql.fragment`ops @> ${sql.jsonb([{ op: 'set', key }] as never)}`);
  return db.exists(sql.unsafe`SELECT 1 FROM outbox WHERE NOT dead AND (${sql.join(probes, sql.fragment` OR `)})`);
}
