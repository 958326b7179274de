/**
 * Queries of the raw `logs` table: filtered pages, exact totals, deletion by
 * condition (with the rollups rebuilt so they agree), and what retention
 * needs. All values are bound parameters.
 */
import type { ClickHouse, ClickHouseReader, QueryParams } from './client.js';
import { deleteSliceSql, ERROR_RECORD, logsSliceCondition, ROLLUPS, type LogsSlice } from './rollups.js';
import { LOG_ROW_SELECT, type LogRow } from './logs-table.js';
import { countSlices, keyReadSettings, pageWindow, sliceTotal } from './log-counts.js';

export interface LogFilter {
  master_id?: number;
  key_id?: number;
  model?: string;
  group?: string;
  status_code?: number;
  /** Unix seconds, inclusive. */
  since?: number;
  /** Unix seconds, exclusive. */
  until?: number;
  /** Only records counted as errors: status >= 400 or a non-empty error_message. */
  error_only?: boolean;
}

const equalities: Array<[keyof LogFilter, string, string]> = [
  ['master_id', 'master_id', 'UInt64'],
  ['key_id', 'key_id', 'UInt64'],
  ['model', 'model', 'String'],
  ['group', '`group`', 'String'],
  ['status_code', 'status_code', 'UInt16'],
];

export function whereOf(f: LogFilter): { where: string; params: QueryParams } {
  const parts: string[] = [];
  const params: QueryParams = {};
  for (const [name, column, type] of equalities) {
    if (f[name] === undefined) continue;
    parts.push(`${column} = {${name}:${type}}`);
    params[name] = f[name];
  }
  if (f.since !== undefined) {
    parts.push("created_at >= {since:DateTime64(3, 'UTC')}");
    params.since = new Date(f.since * 1000);
  }
  if (f.until !== undefined) {
    parts.push("created_at < {until:DateTime64(3, 'UTC')}");
    params.until = new Date(f.until * 1000);
  }
  if (f.error_only) parts.push(ERROR_RECORD);
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

/** A position in the list newest first: the last record of a page (created_at in Unix ms, id). */
export interface LogCursor {
  at_ms: number;
  id: bigint;
}

/** The cursor after a record, as the API shows it: `<created_at ms>-<id>`. */
export const cursorOf = (r: LogRow): string => `${Date.parse(`${r.created_text.replace(' ', 'T')}Z`)}-${r.id}`;

/** A cursor's text read back; null when it is not one. */
export function parseCursor(text: string): LogCursor | null {
  const m = /^(\d{1,15})-(\d{1,20})$/.exec(text);
  if (!m) return null;
  const id = BigInt(m[2]!);
  return id < 2n ** 64n ? { at_ms: Number(m[1]), id } : null;
}

/**
 * One page newest first, after `cursor` when given (keyset: rows strictly
 * older in (created_at, id) order, so a record inserted meanwhile never shifts
 * a page), skipping `offset`, and the exact total of the filter. Both come
 * from the per-slice counts (log-counts.ts): their sum is the total, and the
 * slices bound the page's read to the newest window that holds it (or to the
 * oldest slice when the filter matches fewer records than the page reaches,
 * so a rare or absent value never scans the whole history; no slices at all,
 * and there is nothing to read). A window that held fewer rows than the
 * counts promised (a rollup out of step with the raw table) is read again
 * without it, so the page never depends on the rollups being right when they
 * promise rows.
 */
export async function listLogs(
  ch: ClickHouseReader,
  filter: LogFilter,
  limit: number,
  offset: number,
  cursor?: LogCursor,
): Promise<{ items: LogRow[]; total: number }> {
  const slices = await countSlices(ch, filter);
  const total = sliceTotal(slices);
  const base = whereOf(filter);
  const conds = base.where ? [base.where.slice('WHERE '.length)] : [];
  const params: QueryParams = { ...base.params, limit, offset };
  if (cursor) {
    // The plain bound lets partitions and the created_at index prune; the tuple picks rows strictly after the cursor.
    conds.push("created_at <= {cursor_at:DateTime64(3, 'UTC')}", "(created_at, id) < ({cursor_at:DateTime64(3, 'UTC')}, {cursor_id:UInt64})");
    params.cursor_at = new Date(cursor.at_ms);
    params.cursor_id = cursor.id;
  }
  // Slices reaching the cursor's time may hold rows after it: their records do not count toward the page (a wider window, never a short one).
  const skipped = cursor ? slices.filter((s) => s.to * 1000 > cursor.at_ms).reduce((a, s) => a + s.n, 0) : 0;
  const window = pageWindow(slices, skipped + offset + limit);
  if (window === null) return { items: [], total: 0 };
  // Without a master or key the sort key cannot find the window's rows: the page's keys come from the `by_time`
  // projection (migration 016), then its rows by those keys. With one, the sort key (or key_id_bloom) finds them directly.
  const keyed = filter.master_id === undefined && filter.key_id === undefined;
  const page = (from: number | null) => {
    const w = from === null ? conds : [...conds, "created_at >= {window_from:DateTime64(3, 'UTC')}"];
    const where = w.length ? `WHERE ${w.join(' AND ')}` : '';
    const order = 'ORDER BY created_at DESC, id DESC';
    const slice = 'LIMIT {limit:UInt32} OFFSET {offset:UInt64}';
    return ch.query<LogRow>(
      keyed
        ? `SELECT ${LOG_ROW_SELECT} FROM logs WHERE (master_id, key_id, created_at, id) IN (SELECT master_id, key_id, created_at, id FROM logs ${where} ${order} ${slice}) ${order}`
        : `SELECT ${LOG_ROW_SELECT} FROM logs ${where} ${order} ${slice}`,
      from === null ? params : { ...params, window_from: new Date(from * 1000) },
    );
  };
  const first = await page(window.from);
  const promised = Math.min(limit, Math.max(0, window.holds - skipped - offset));
  const items = first.length < promised ? await page(null) : first;
  return { items, total };
}

export async function countLogs(ch: ClickHouseReader, filter: LogFilter = {}): Promise<number> {
  const { where, params } = whereOf(filter);
  const rows = await ch.query<{ n: number }>(`SELECT count() AS n FROM logs ${where}`, params);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Deletes a slice of raw logs and rebuilds the rollups it touched; returns how many rows went. `timed`, when
 * given, hears each statement and the milliseconds it took (the retention-scale bench's breakdown).
 */
export async function deleteLogs(ch: ClickHouse, slice: LogsSlice, timed?: (sql: string, ms: number) => void): Promise<number> {
  const { sql, params } = logsSliceCondition(slice);
  const n = Number((await ch.query<{ n: number }>(`SELECT count() AS n FROM logs WHERE ${sql}${keyReadSettings(slice)}`, params))[0]?.n ?? 0);
  if (n === 0) return 0;
  for (const s of deleteSliceSql(slice)) {
    const started = performance.now();
    await ch.command(s.sql, s.params);
    timed?.(s.sql, performance.now() - started);
  }
  return n;
}

/** The largest id a node has stored (0 when none): ids resume after it. */
export async function maxIdOfNode(ch: ClickHouse, node: number): Promise<number> {
  const rows = await ch.query<{ top: number }>(
    'SELECT max(id) AS top FROM logs WHERE intDiv(id, 256) % 16 = {node:UInt8}',
    { node },
  );
  return Number(rows[0]?.top ?? 0);
}

/** Day partitions (YYYYMMDD) of the raw table and every rollup. */
export async function dayPartitions(ch: ClickHouse): Promise<Array<{ table: string; partition: string }>> {
  const tables = ['logs', ...ROLLUPS.map((r) => r.table)];
  return ch.query<{ table: string; partition: string }>(
    'SELECT DISTINCT table, partition FROM system.parts WHERE database = currentDatabase() AND active AND has({tables:Array(String)}, table) ORDER BY table, partition',
    { tables },
  );
}

/** The projections of `logs` (migrations 016, 018): a lightweight delete drops them from the parts it touches. */
export const LOGS_PROJECTIONS = ['by_time', 'by_master_time'] as const;

/**
 * Day partitions of `logs` holding a part that a lightweight delete left
 * without one of its projections (LOGS_PROJECTIONS), newest first.
 */
export async function partitionsLackingProjections(ch: ClickHouse): Promise<string[]> {
  const rows = await ch.query<{ partition: string }>(
    "SELECT DISTINCT partition FROM system.parts WHERE database = currentDatabase() AND table = 'logs' AND active AND has_lightweight_delete AND NOT hasAll(projections, {names:Array(String)}) ORDER BY partition DESC",
    { names: [...LOGS_PROJECTIONS] },
  );
  return rows.map((r) => r.partition);
}

/**
 * Writes the projections of `logs` again in day partitions: the parts with
 * deleted rows are rewritten without them (a projection cannot be built on a
 * part that hides rows), then each projection is built where it is missing.
 * Merging instead would fail: ClickHouse does not merge parts with different
 * projections, so new parts beside the touched ones never merge with them
 * either until this has run. Two ALTERs for all the partitions given, not three
 * a partition: each ALTER is a mutation that visits every part of `logs` in
 * turn (~0.13 s a part embedded, 2-4 s a partition through the HTTP bridge),
 * whichever partitions it names.
 */
export async function restoreProjections(ch: ClickHouse, partitions: readonly string[]): Promise<void> {
  for (const p of partitions) if (!/^\d{8}$/.test(p)) throw new Error(`bad partition logs/${p}`);
  if (partitions.length === 0) return;
  await ch.command(`ALTER TABLE logs ${partitions.map((p) => `APPLY DELETED MASK IN PARTITION ${p}`).join(', ')} SETTINGS mutations_sync = 2`);
  const build = partitions.flatMap((p) => LOGS_PROJECTIONS.map((name) => `MATERIALIZE PROJECTION ${name} IN PARTITION ${p}`));
  await ch.command(`ALTER TABLE logs ${build.join(', ')} SETTINGS mutations_sync = 2`);
}

export async function dropPartition(ch: ClickHouse, table: string, partition: string): Promise<void> {
  if (!/^[a-z_]+$/.test(table) || !/^\d{6}(\d{2})?$/.test(partition)) throw new Error(`bad partition ${table}/${partition}`);
  await ch.command(`ALTER TABLE ${table} DROP PARTITION ${partition}`);
}

/** created_at of the n-th oldest record (1-based), as Unix milliseconds; null when there are fewer. */
export async function nthOldest(ch: ClickHouse, n: number): Promise<number | null> {
  const rows = await ch.query<{ ms: number }>(
    'SELECT toUnixTimestamp64Milli(created_at) AS ms FROM logs ORDER BY created_at, id LIMIT 1 OFFSET {skip:UInt64}',
    { skip: n - 1 },
  );
  return rows[0] ? Number(rows[0].ms) : null;
}

/** Empties request and response bodies of records created before `before`; returns how many had one. */
export async function clearBodies(ch: ClickHouse, before: Date): Promise<number> {
  const where = "created_at < {before:DateTime64(3, 'UTC')} AND (request_body != '' OR response_body != '')";
  const n = Number((await ch.query<{ n: number }>(`SELECT count() AS n FROM logs WHERE ${where}`, { before }))[0]?.n ?? 0);
  if (n > 0) {
    await ch.command(`ALTER TABLE logs UPDATE request_body = '', response_body = '' WHERE ${where} SETTINGS mutations_sync = 2`, { before });
  }
  return n;
}

/** created_at of the newest stored record as DateTime64 text in UTC; null when none is stored. */
export async function newestCreatedAt(ch: ClickHouse): Promise<string | null> {
  const rows = await ch.query<{ n: number; newest: string }>('SELECT count() AS n, toString(max(created_at)) AS newest FROM logs');
  return Number(rows[0]?.n ?? 0) > 0 ? rows[0]!.newest : null;
}
