/**
 * Queries of masters and child keys (sql/postgres/002_tenancy.sql). Times the
 * service decides (deletion, revocation, quota periods, flush ids) come from
 * the service clock as ISO strings, so tests that move time move them too.
 */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { decimal, idRow, int, noRows, text, texts, time, total } from './row-types.js';

// Row schemas: each read below is typed by one (./result-parser.ts); the types are inferred from them.
const activity = z.enum(['active', 'suspended']);
/** The budget columns of a master or key: amount as decimal text (null: none), the period's spend as last computed. */
const budgetColumns = {
  budget: decimal.nullable(),
  budget_period: text,
  budget_period_start: time.nullable(),
  budget_used: decimal,
};

const masterRow = z.object({
  id: int,
  name: text,
  group: text,
  key_prefix: text,
  has_digest: z.boolean(),
  max_child_keys: int,
  global_qps: int,
  epoch: int,
  status: activity,
  default_namespace: text,
  allowed_namespaces: texts,
  child_keys: int,
  ...budgetColumns,
  created_at: time,
  updated_at: time,
  deleted_at: time.nullable(),
});
export type MasterRow = z.infer<typeof masterRow>;

const keyRow = z.object({
  id: int,
  master_id: int,
  name: text,
  token_hash: text,
  key_prefix: text,
  issued_by: z.enum(['master', 'admin']),
  issued_at_epoch: int,
  group: text,
  scopes: text,
  quota_limit: int,
  quota_used: int,
  quota_reset_type: text,
  quota_period_start: time.nullable(),
  model_limits_enabled: z.boolean(),
  model_limits: text,
  allow_ips: text,
  deny_ips: text,
  default_namespace: text,
  allowed_namespaces: texts,
  status: activity,
  revoked: z.boolean(),
  revoked_at: time.nullable(),
  expires_at: time.nullable(),
  request_count: int,
  last_accessed_at: time.nullable(),
  ...budgetColumns,
  created_at: time,
  updated_at: time,
});
export type KeyRow = z.infer<typeof keyRow>;

const quotaWritten = z.object({ id: int, token_hash: text, quota_used: int });
const seenFlush = z.object({ accepted_keys: int, accepted_upstream_keys: int });

const masterColumns = sql.fragment`
  m.id, m.name, m."group", m.key_prefix, m.key_digest IS NOT NULL AS has_digest, m.max_child_keys, m.global_qps,
  m.epoch, m.status, m.default_namespace, to_jsonb(m.allowed_namespaces) AS allowed_namespaces,
  (SELECT count(*) FROM child_keys c WHERE c.master_id = m.id AND NOT c.revoked)::int AS child_keys,
  m.budget::text AS budget, m.budget_period, m.budget_period_start, m.budget_used::text AS budget_used,
  m.created_at, m.updated_at, m.deleted_at`;

const keyColumns = sql.fragment`
  k.id, k.master_id, k.name, k.token_hash, k.key_prefix, k.issued_by, k.issued_at_epoch, k."group", k.scopes,
  k.quota_limit, k.quota_used, k.quota_reset_type, k.quota_period_start, k.model_limits_enabled, k.model_limits,
  k.allow_ips, k.deny_ips, k.default_namespace, to_jsonb(k.allowed_namespaces) AS allowed_namespaces, k.status,
  k.revoked, k.revoked_at, k.expires_at, k.request_count, k.last_accessed_at,
  k.budget::text AS budget, k.budget_period, k.budget_period_start, k.budget_used::text AS budget_used, k.created_at, k.updated_at`;

const textArray = (values: string[]) => sql.array(values, 'text');
const ts = (iso: string | null) => (iso === null ? sql.fragment`NULL` : sql.fragment`${iso}::timestamptz`);

/** `SET a = $1, b = $2` from a column map; arrays become text[], `{ts: ...}` a timestamptz. */
function assignments(fields: Record<string, unknown>) {
  return sql.join(
    Object.entries(fields).map(([column, value]) => {
      const v = Array.isArray(value)
        ? textArray(value as string[])
        : value !== null && typeof value === 'object' && 'ts' in value
          ? ts((value as { ts: string | null }).ts)
          : sql.fragment`${value as string | number | boolean | null}`;
      return sql.fragment`${sql.identifier([column])} = ${v}`;
    }),
    sql.fragment`, `,
  );
}

// Masters.

export interface NewMaster {
  name: string;
  group: string;
  keyDigest: string;
  keyPrefix: string;
  maxChildKeys: number;
  globalQps: number;
  /** Absent: no budget. */
  budget?: Budget;
}

/** A budget as written: the amount (null: none), its period and the period's start (null for `never`). */
export interface Budget {
  budget: number | null;
  period: string;
  periodStart: string | null;
}

export async function insertMaster(db: CommonQueryMethods, m: NewMaster): Promise<MasterRow> {
  const id = await db.oneFirst(sql.type(idRow)`
    INSERT INTO masters (name, "group", key_digest, key_prefix, max_child_keys, global_qps, budget, budget_period, budget_period_start)
    VALUES (${m.name}, ${m.group}, ${m.keyDigest}, ${m.keyPrefix}, ${m.maxChildKeys}, ${m.globalQps}, ${m.budget?.budget ?? null},
      ${m.budget?.period ?? 'never'}, ${ts(m.budget?.periodStart ?? null)})
    RETURNING id`);
  return (await getMaster(db, id))!;
}

/** A live (not deleted) master; `lock` takes its row lock for the rest of the transaction. */
export async function getMaster(db: CommonQueryMethods, id: number, lock = false): Promise<MasterRow | null> {
  return db.maybeOne(sql.type(masterRow)`
    SELECT ${masterColumns} FROM masters m WHERE m.id = ${id} AND m.deleted_at IS NULL
    ${lock ? sql.fragment`FOR UPDATE OF m` : sql.fragment``}`);
}

export async function masterByDigest(db: CommonQueryMethods, digest: string): Promise<MasterRow | null> {
  return db.maybeOne(sql.type(masterRow)`
    SELECT ${masterColumns} FROM masters m WHERE m.key_digest = ${digest} AND m.deleted_at IS NULL`);
}

export async function listMasters(
  db: CommonQueryMethods,
  q: { offset: number; limit: number; search?: string },
): Promise<{ rows: MasterRow[]; total: number }> {
  const pattern = q.search ? `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const where = pattern
    ? sql.fragment`m.deleted_at IS NULL AND (m.name ILIKE ${pattern} OR m."group" ILIKE ${pattern})`
    : sql.fragment`m.deleted_at IS NULL`;
  const rows = await db.any(sql.type(masterRow)`
    SELECT ${masterColumns} FROM masters m WHERE ${where} ORDER BY m.id LIMIT ${q.limit} OFFSET ${q.offset}`);
  return { rows: [...rows], total: await db.oneFirst(sql.type(total)`SELECT count(*)::int AS total FROM masters m WHERE ${where}`) };
}

/** Updates columns of a live master (touching updated_at); returns the new row. */
export async function updateMaster(db: CommonQueryMethods, id: number, fields: Record<string, unknown>): Promise<MasterRow> {
  await db.query(noRows`UPDATE masters SET ${assignments(fields)}, updated_at = now() WHERE id = ${id}`);
  return db.one(sql.type(masterRow)`SELECT ${masterColumns} FROM masters m WHERE m.id = ${id}`);
}

// Child keys.

export interface NewKey {
  masterId: number;
  name: string;
  tokenHash: string;
  keyPrefix: string;
  issuedBy: 'master' | 'admin';
  issuedAtEpoch: number;
  group: string;
  scopes: string;
  quotaLimit: number;
  quotaResetType: string;
  quotaPeriodStart: string | null;
  modelLimitsEnabled: boolean;
  modelLimits: string;
  allowIps: string;
  denyIps: string;
  defaultNamespace: string;
  allowedNamespaces: string[];
  status: string;
  expiresAt: string | null;
  /** Absent: no budget. */
  budget?: Budget;
}

export async function insertKey(db: CommonQueryMethods, k: NewKey): Promise<KeyRow> {
  const id = await db.oneFirst(sql.type(idRow)`
    INSERT INTO child_keys (master_id, name, token_hash, key_prefix, issued_by, issued_at_epoch, "group", scopes,
      quota_limit, quota_reset_type, quota_period_start, model_limits_enabled, model_limits, allow_ips, deny_ips,
      default_namespace, allowed_namespaces, status, expires_at, budget, budget_period, budget_period_start)
    VALUES (${k.masterId}, ${k.name}, ${k.tokenHash}, ${k.keyPrefix}, ${k.issuedBy}, ${k.issuedAtEpoch}, ${k.group},
      ${k.scopes}, ${k.quotaLimit}, ${k.quotaResetType}, ${ts(k.quotaPeriodStart)}, ${k.modelLimitsEnabled},
      ${k.modelLimits}, ${k.allowIps}, ${k.denyIps}, ${k.defaultNamespace}, ${textArray(k.allowedNamespaces)},
      ${k.status}, ${ts(k.expiresAt)}, ${k.budget?.budget ?? null},
      ${k.budget?.period ?? 'never'}, ${ts(k.budget?.periodStart ?? null)})
    RETURNING id`);
  return (await getKey(db, id))!;
}

/** A key by id; with `masterId`, only when it belongs to that master. */
export async function getKey(db: CommonQueryMethods, id: number, masterId?: number, lock = false): Promise<KeyRow | null> {
  return db.maybeOne(sql.type(keyRow)`
    SELECT ${keyColumns} FROM child_keys k
    WHERE k.id = ${id} ${masterId === undefined ? sql.fragment`` : sql.fragment`AND k.master_id = ${masterId}`}
    ${lock ? sql.fragment`FOR UPDATE OF k` : sql.fragment``}`);
}

export async function keyByHash(db: CommonQueryMethods, tokenHash: string): Promise<KeyRow | null> {
  return db.maybeOne(sql.type(keyRow)`SELECT ${keyColumns} FROM child_keys k WHERE k.token_hash = ${tokenHash}`);
}

export async function listKeys(
  db: CommonQueryMethods,
  masterId: number,
  q: { offset: number; limit: number; search?: string },
): Promise<{ rows: KeyRow[]; total: number }> {
  const pattern = q.search ? `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const where = pattern
    ? sql.fragment`k.master_id = ${masterId} AND (k.name ILIKE ${pattern} OR k.scopes ILIKE ${pattern})`
    : sql.fragment`k.master_id = ${masterId}`;
  const rows = await db.any(sql.type(keyRow)`
    SELECT ${keyColumns} FROM child_keys k WHERE ${where} ORDER BY k.id LIMIT ${q.limit} OFFSET ${q.offset}`);
  return { rows: [...rows], total: await db.oneFirst(sql.type(total)`SELECT count(*)::int AS total FROM child_keys k WHERE ${where}`) };
}

export async function updateKey(db: CommonQueryMethods, id: number, fields: Record<string, unknown>): Promise<KeyRow> {
  await db.query(noRows`UPDATE child_keys SET ${assignments(fields)}, updated_at = now() WHERE id = ${id}`);
  return (await getKey(db, id))!;
}

/** Sets the namespaces of every unrevoked key of a master (access propagation); returns the keys. */
export async function setMasterKeysAccess(
  db: CommonQueryMethods,
  masterId: number,
  defaultNamespace: string,
  allowed: string[],
): Promise<KeyRow[]> {
  await db.query(noRows`
    UPDATE child_keys SET default_namespace = ${defaultNamespace}, allowed_namespaces = ${textArray(allowed)}, updated_at = now()
    WHERE master_id = ${masterId} AND NOT revoked`);
  return [...(await db.any(sql.type(keyRow)`
    SELECT ${keyColumns} FROM child_keys k WHERE k.master_id = ${masterId} AND NOT k.revoked ORDER BY k.id`))];
}

/** Unrevoked keys of a master. */
export async function liveKeysOf(db: CommonQueryMethods, masterId: number): Promise<KeyRow[]> {
  return [...(await db.any(sql.type(keyRow)`
    SELECT ${keyColumns} FROM child_keys k WHERE k.master_id = ${masterId} AND NOT k.revoked ORDER BY k.id`))];
}

// Quota.

/** Zeroes quota_used of the keys of one reset type whose period began before `boundary`. */
export async function resetQuotas(
  db: CommonQueryMethods,
  resetType: string,
  boundary: string,
): Promise<Array<{ id: number; token_hash: string }>> {
  return [...(await db.any(sql.type(z.object({ id: int, token_hash: text }))`
    UPDATE child_keys SET quota_used = 0, quota_period_start = ${boundary}::timestamptz, updated_at = now()
    WHERE quota_reset_type = ${resetType} AND NOT revoked
      AND (quota_period_start IS NULL OR quota_period_start < ${boundary}::timestamptz)
    RETURNING id, token_hash`))];
}

export interface KeyUsage {
  token_hash: string;
  requests: number;
  tokens: number;
  last_accessed_at: number;
}

/** Adds flushed counters to the keys they name; returns each known key's id and new quota_used. */
export async function applyKeyUsage(
  db: CommonQueryMethods,
  items: KeyUsage[],
): Promise<Array<{ id: number; token_hash: string; quota_used: number }>> {
  if (items.length === 0) return [];
  return [...(await db.any(sql.type(quotaWritten)`
    UPDATE child_keys k SET
      request_count = k.request_count + v.requests,
      quota_used = k.quota_used + v.tokens,
      last_accessed_at = CASE WHEN v.last > 0
        THEN GREATEST(coalesce(k.last_accessed_at, '-infinity'), to_timestamp(v.last)) ELSE k.last_accessed_at END
    FROM unnest(${textArray(items.map((i) => i.token_hash))}, ${sql.array(items.map((i) => i.requests), 'int8')},
                ${sql.array(items.map((i) => i.tokens), 'int8')}, ${sql.array(items.map((i) => i.last_accessed_at), 'int8')})
      AS v(token_hash, requests, tokens, last)
    WHERE k.token_hash = v.token_hash
    RETURNING k.id, k.token_hash, k.quota_used`))];
}

// Flush ids.

export type SeenFlush = z.infer<typeof seenFlush>;

/**
 * Claims a flush id: null when it is new (the caller applies the flush and
 * records its answer), else the answer given the first time. Ids seen before
 * `since` are forgotten first. A concurrent repeat waits on the unique index
 * until the first commits, so a batch is never applied twice.
 */
export async function claimFlush(db: CommonQueryMethods, flushId: string, at: string, since: string): Promise<SeenFlush | null> {
  await db.query(noRows`DELETE FROM stats_flushes WHERE seen_at < ${since}::timestamptz`);
  const claimed = await db.maybeOne(sql.type(z.object({ flush_id: text }))`
    INSERT INTO stats_flushes (flush_id, accepted_keys, accepted_upstream_keys, seen_at)
    VALUES (${flushId}, 0, 0, ${at}::timestamptz) ON CONFLICT (flush_id) DO NOTHING RETURNING flush_id`);
  if (claimed) return null;
  return db.one(sql.type(seenFlush)`
    SELECT accepted_keys, accepted_upstream_keys FROM stats_flushes WHERE flush_id = ${flushId}`);
}

export async function recordFlush(db: CommonQueryMethods, flushId: string, answer: SeenFlush): Promise<void> {
  await db.query(noRows`
    UPDATE stats_flushes SET accepted_keys = ${answer.accepted_keys}, accepted_upstream_keys = ${answer.accepted_upstream_keys}
    WHERE flush_id = ${flushId}`);
}

// Full snapshot.

/**
 * Every master (deleted ones too) and every key (revoked ones too), locked
 * FOR SHARE until the caller's transaction ends: a change to one of them waits
 * and enqueues its outbox entry after the snapshot's, so the store never ends
 * up with the snapshot's older copy.
 */
export async function allTenancy(db: CommonQueryMethods): Promise<{ masters: MasterRow[]; keys: KeyRow[] }> {
  const masters = await db.any(sql.type(masterRow)`SELECT ${masterColumns} FROM masters m ORDER BY m.id FOR SHARE OF m`);
  const keys = await db.any(sql.type(keyRow)`SELECT ${keyColumns} FROM child_keys k ORDER BY k.id FOR SHARE OF k`);
  return { masters: [...masters], keys: [...keys] };
}
