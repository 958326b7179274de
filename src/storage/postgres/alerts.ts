/**
 * Queries of alerts, alert thresholds, the log-error webhook configuration and
 * its deliveries (sql/postgres/004_alerts.sql). Times the service decides come
 * from the service clock as ISO strings, so tests that move time move them too.
 */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { idRow, jsonObject, noRows, time } from './row-types.js';

// The values the alerts table's text columns hold (src/contract/alert-values.ts); the alert domain gives their rules.
import { severities, statuses, type AlertStatus, type Severity } from '../../contract/alert-values.js';

export { severities, statuses, type AlertStatus, type Severity };

// Row schemas: each read below is typed by one, and its rows are checked against it (./result-parser.ts).
const count = z.object({ count: z.number().int() });

const alertRow = z.object({
  id: z.number().int(),
  type: z.string(),
  severity: z.enum(severities),
  status: z.enum(statuses),
  fingerprint: z.string(),
  message: z.string(),
  metadata: jsonObject,
  master_id: z.number().int().nullable(),
  source: z.string(),
  occurrences: z.number().int(),
  last_seen_at: time,
  acknowledged_at: time.nullable(),
  resolved_at: time.nullable(),
  dismissed_at: time.nullable(),
  createdAt: time,
  updatedAt: time,
});
export type AlertRow = z.infer<typeof alertRow>;

/** The single record of alert_thresholds. */
const thresholds = z.object({
  global_qps: z.number().int(),
  master_rpm: z.number().int(),
  master_tpm: z.number().int(),
  master_rpd: z.number().int(),
  master_tpd: z.number().int(),
  min_samples: z.number().int(),
});
export type Thresholds = z.infer<typeof thresholds>;

/** The single record of log_webhook_config. */
const webhookConfig = z.object({
  enabled: z.boolean(),
  url: z.string(),
  threshold: z.number().int(),
  window_seconds: z.number().int(),
  cooldown_seconds: z.number().int(),
  status_code_threshold: z.number().int(),
  detect_error_message: z.boolean(),
  secret: z.string(),
});
export type WebhookConfig = z.infer<typeof webhookConfig>;

const delivery = z.object({
  trigger_id: z.string(),
  attempt: z.number().int(),
  url: z.string(),
  count: z.number().int(),
  ok: z.boolean(),
  status_code: z.number().int().nullable(),
  error: z.string(),
  duration_ms: z.number().int(),
});
export type Delivery = z.infer<typeof delivery>;

const thresholdsRead = thresholds.extend({ updatedAt: time });
const webhookConfigRead = webhookConfig.extend({ updatedAt: time });
const deliveryRead = delivery.extend({ id: z.number().int(), createdAt: time });
const alertCount = z.object({ status: z.enum(statuses), severity: z.enum(severities), n: z.number().int() });

export interface NewAlert {
  type: string;
  severity: Severity;
  fingerprint: string;
  message: string;
  metadata: Record<string, unknown>;
  master_id: number | null;
  source: 'admin' | 'detector' | 'report';
}

export interface AlertFilter {
  status?: string;
  severity?: string;
  type?: string;
  master_id?: number;
  search?: string;
}

const alertColumns = sql.fragment`
  id, type, severity, status, fingerprint, message, metadata, master_id, source, occurrences, last_seen_at,
  acknowledged_at, resolved_at, dismissed_at, created_at AS "createdAt", updated_at AS "updatedAt"`;

const ts = (iso: string) => sql.fragment`${iso}::timestamptz`;

/** Inserts unless an open alert holds the fingerprint; null then. */
export async function insertAlert(db: CommonQueryMethods, a: NewAlert, at: string): Promise<AlertRow | null> {
  return db.maybeOne(sql.type(alertRow)`
    INSERT INTO alerts (type, severity, fingerprint, message, metadata, master_id, source, last_seen_at, created_at, updated_at)
    VALUES (${a.type}, ${a.severity}, ${a.fingerprint}, ${a.message}, ${sql.jsonb(a.metadata as never)}, ${a.master_id},
            ${a.source}, ${ts(at)}, ${ts(at)}, ${ts(at)})
    ON CONFLICT (fingerprint) WHERE status IN ('active', 'acknowledged') DO NOTHING
    RETURNING ${alertColumns}`);
}

/** Serializes writers of one fingerprint until the transaction ends. */
export async function lockFingerprint(tx: CommonQueryMethods, fingerprint: string): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(4004, hashtext(${fingerprint}))`);
}

/** The most recent alert of a fingerprint, whatever its status. */
export async function latestAlert(db: CommonQueryMethods, fingerprint: string): Promise<AlertRow | null> {
  return db.maybeOne(sql.type(alertRow)`
    SELECT ${alertColumns} FROM alerts WHERE fingerprint = ${fingerprint} ORDER BY created_at DESC, id DESC LIMIT 1`);
}

/** Records that an open alert was raised again: counts it and keeps the latest details and the higher severity. */
export async function touchAlert(
  db: CommonQueryMethods,
  id: number,
  change: { severity: Severity; message: string; metadata: Record<string, unknown> },
  at: string,
): Promise<void> {
  await db.query(noRows`
    UPDATE alerts SET occurrences = occurrences + 1, last_seen_at = ${ts(at)}, severity = ${change.severity},
      message = ${change.message}, metadata = ${sql.jsonb(change.metadata as never)}, updated_at = ${ts(at)}
    WHERE id = ${id}`);
}

export async function getAlert(db: CommonQueryMethods, id: number): Promise<AlertRow | null> {
  return db.maybeOne(sql.type(alertRow)`SELECT ${alertColumns} FROM alerts WHERE id = ${id}`);
}

export async function listAlerts(
  db: CommonQueryMethods,
  f: AlertFilter,
  limit: number,
  offset: number,
): Promise<{ items: AlertRow[]; total: number }> {
  const conds = [sql.fragment`TRUE`];
  if (f.status !== undefined) conds.push(sql.fragment`status = ${f.status}`);
  if (f.severity !== undefined) conds.push(sql.fragment`severity = ${f.severity}`);
  if (f.type !== undefined) conds.push(sql.fragment`type = ${f.type}`);
  if (f.master_id !== undefined) conds.push(sql.fragment`master_id = ${f.master_id}`);
  if (f.search) {
    const like = `%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conds.push(sql.fragment`(message ILIKE ${like} OR fingerprint ILIKE ${like})`);
  }
  const where = sql.join(conds, sql.fragment` AND `);
  const total = await db.oneFirst(sql.type(count)`SELECT count(*)::int AS count FROM alerts WHERE ${where}`);
  const items = await db.any(sql.type(alertRow)`
    SELECT ${alertColumns} FROM alerts WHERE ${where}
    ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`);
  return { items: [...items], total };
}

/** Moves an alert to `to` when its status is one of `from`; null when it is not (or does not exist). */
export async function transitionAlert(
  db: CommonQueryMethods,
  id: number,
  from: readonly string[],
  to: string,
  stamp: string,
  at: string,
): Promise<AlertRow | null> {
  return db.maybeOne(sql.type(alertRow)`
    UPDATE alerts SET status = ${to}, ${sql.identifier([stamp])} = ${ts(at)}, updated_at = ${ts(at)}
    WHERE id = ${id} AND status = ANY(${sql.array([...from], 'text')})
    RETURNING ${alertColumns}`);
}

/** Counts per status and per severity. */
export async function alertCounts(db: CommonQueryMethods): Promise<Array<z.infer<typeof alertCount>>> {
  return [...(await db.any(sql.type(alertCount)`
    SELECT status, severity, count(*)::int AS n FROM alerts GROUP BY status, severity`))];
}

/** Deletes resolved and dismissed alerts closed before `cutoff`; answers how many. */
export async function deleteClosedAlerts(db: CommonQueryMethods, cutoff: string): Promise<number> {
  const rows = await db.any(sql.type(idRow)`
    DELETE FROM alerts WHERE status IN ('resolved', 'dismissed') AND coalesce(resolved_at, dismissed_at) < ${ts(cutoff)}
    RETURNING id`);
  return rows.length;
}

// Single records: created with their defaults on first use.

export async function readThresholds(db: CommonQueryMethods, defaults: Thresholds): Promise<Thresholds & { updatedAt: string }> {
  await db.query(noRows`
    INSERT INTO alert_thresholds (id, global_qps, master_rpm, master_tpm, master_rpd, master_tpd, min_samples)
    VALUES (1, ${defaults.global_qps}, ${defaults.master_rpm}, ${defaults.master_tpm}, ${defaults.master_rpd},
            ${defaults.master_tpd}, ${defaults.min_samples})
    ON CONFLICT (id) DO NOTHING`);
  return db.one(sql.type(thresholdsRead)`
    SELECT global_qps, master_rpm, master_tpm, master_rpd, master_tpd, min_samples, updated_at AS "updatedAt"
    FROM alert_thresholds WHERE id = 1`);
}

export async function readWebhookConfig(db: CommonQueryMethods, defaults: WebhookConfig): Promise<WebhookConfig & { updatedAt: string }> {
  await db.query(noRows`
    INSERT INTO log_webhook_config (id, enabled, url, threshold, window_seconds, cooldown_seconds, status_code_threshold,
                                    detect_error_message, secret)
    VALUES (1, ${defaults.enabled}, ${defaults.url}, ${defaults.threshold}, ${defaults.window_seconds},
            ${defaults.cooldown_seconds}, ${defaults.status_code_threshold}, ${defaults.detect_error_message}, ${defaults.secret})
    ON CONFLICT (id) DO NOTHING`);
  return db.one(sql.type(webhookConfigRead)`
    SELECT enabled, url, threshold, window_seconds, cooldown_seconds, status_code_threshold, detect_error_message, secret,
           updated_at AS "updatedAt"
    FROM log_webhook_config WHERE id = 1`);
}

/** Sets the given columns of a single record (id 1), which must exist. */
export async function updateSingle(
  db: CommonQueryMethods,
  table: 'alert_thresholds' | 'log_webhook_config',
  fields: Record<string, string | number | boolean>,
  at: string,
): Promise<void> {
  const sets = Object.entries(fields).map(([k, v]) => sql.fragment`${sql.identifier([k])} = ${v}`);
  sets.push(sql.fragment`updated_at = ${ts(at)}`);
  await db.query(noRows`UPDATE ${sql.identifier([table])} SET ${sql.join(sets, sql.fragment`, `)} WHERE id = 1`);
}

/** Keeps the attempt and drops all but the latest `keep`. */
export async function recordDelivery(db: CommonQueryMethods, d: Delivery, at: string, keep: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(noRows`
      INSERT INTO log_webhook_deliveries (trigger_id, attempt, url, count, ok, status_code, error, duration_ms, created_at)
      VALUES (${d.trigger_id}, ${d.attempt}, ${d.url}, ${d.count}, ${d.ok}, ${d.status_code}, ${d.error}, ${d.duration_ms}, ${ts(at)})`);
    await tx.query(noRows`
      DELETE FROM log_webhook_deliveries
      WHERE id < (SELECT min(id) FROM (SELECT id FROM log_webhook_deliveries ORDER BY id DESC LIMIT ${keep}) latest)`);
  });
}

export async function listDeliveries(
  db: CommonQueryMethods,
  limit: number,
  offset: number,
): Promise<{ items: Array<Delivery & { id: number; createdAt: string }>; total: number }> {
  const total = await db.oneFirst(sql.type(count)`SELECT count(*)::int AS count FROM log_webhook_deliveries`);
  const items = await db.any(sql.type(deliveryRead)`
    SELECT id, trigger_id, attempt, url, count, ok, status_code, error, duration_ms, created_at AS "createdAt"
    FROM log_webhook_deliveries ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`);
  return { items: [...items], total };
}
