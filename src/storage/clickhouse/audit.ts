/** The audit table (sql/clickhouse/002_audit.sql): batched inserts, filtered reads, its TTL. */
import type { ClickHouse, QueryParams } from './client.js';

export interface AuditRow {
  time: string;
  request_id: string;
  actor_role: string;
  actor_id: string;
  resource: string;
  resource_id: string;
  action: string;
  method: string;
  route: string;
  status: number;
  before: string;
  after: string;
  diff: string;
}

export interface AuditFilter {
  /** Any of these resources. */
  resource?: string[];
  /** Any of these actions. */
  action?: string[];
  resource_id?: string;
  actor_role?: string;
  actor_id?: string;
  since?: number;
  until?: number;
}

export async function insertAudit(ch: ClickHouse, rows: AuditRow[]): Promise<void> {
  if (rows.length) await ch.insert('audit_log', rows.map((r) => JSON.stringify(r)).join('\n'));
}

export async function listAudit(ch: ClickHouse, f: AuditFilter, limit: number, offset: number): Promise<{ items: AuditRow[]; total: number }> {
  const parts: string[] = [];
  const params: QueryParams = { limit, offset };
  for (const k of ['resource', 'action'] as const) {
    if (f[k] !== undefined) {
      parts.push(`has({${k}:Array(String)}, ${k})`);
      params[k] = f[k];
    }
  }
  for (const k of ['resource_id', 'actor_role', 'actor_id'] as const) {
    if (f[k] !== undefined) {
      parts.push(`${k} = {${k}:String}`);
      params[k] = f[k];
    }
  }
  if (f.since !== undefined) {
    parts.push("time >= {since:DateTime64(3, 'UTC')}");
    params.since = new Date(f.since * 1000);
  }
  if (f.until !== undefined) {
    parts.push("time < {until:DateTime64(3, 'UTC')}");
    params.until = new Date(f.until * 1000);
  }
  const where = parts.length ? `WHERE ${parts.join(' AND ')}` : '';
  const [items, count] = await Promise.all([
    // The time as ClickHouse prints it (`YYYY-MM-DD hh:mm:ss.sss`, UTC), made RFC 3339 below.
    ch.query<Omit<AuditRow, 'time'> & { at_text: string }>(
      `SELECT toString(time) AS at_text, request_id, actor_role, actor_id, resource, resource_id, action, method, route, status, before, after, diff
       FROM audit_log ${where} ORDER BY time DESC LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      params,
    ),
    ch.query<{ n: number }>(`SELECT count() AS n FROM audit_log ${where}`, params),
  ]);
  return {
    items: items.map(({ at_text, ...rest }) => ({ ...rest, time: `${at_text.replace(' ', 'T')}Z` })),
    total: Number(count[0]?.n ?? 0),
  };
}

/** Re-applies the retention as the table's TTL (metadata only; expired parts go at the next merge). */
export async function setAuditRetention(ch: ClickHouse, days: number): Promise<void> {
  await ch.command(
    `ALTER TABLE audit_log MODIFY TTL toDateTime(time) + INTERVAL ${Math.floor(days)} DAY DELETE SETTINGS materialize_ttl_after_modify = 0`,
  );
}
