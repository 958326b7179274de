/**
 * What a batch replayed from the write-ahead file needs once its insert
 * returned (the logs actor runs these; docs/log-pipeline.md, "After a crash").
 * The replay goes under the batch's first deduplication token, and a crash in
 * the middle of that first insert can leave either order of ClickHouse's two
 * steps half done:
 * - the part committed, its block not recorded: the replay stores the rows a
 *   second time (dedupLogIds removes the copies);
 * - the block recorded, its part not committed: the replay is skipped as a
 *   duplicate and the rows are in no table (restoreMissingLogs inserts them
 *   again, undeduplicated), or in `logs` but missing from a rollup
 *   (rollup-check.ts, repairRollups, once every replayed batch is in).
 */
import type { ClickHouse, QueryParams } from './client.js';
import { bucketRanges, withinRanges } from './range-cut.js';
import type { ReplaySpan } from './rollup-check.js';

/** A replayed batch: each row's line and id, and what it touched. */
export interface ReplayedBatch extends ReplaySpan {
  ids: number[];
  lines: string[];
}

/** Reads the rows (JSONCompactEachRow lines of `columns`); null when they lack the columns needed (id, created_at, master_id, key_id). */
export function replayedBatch(rows: Buffer, columns: readonly string[]): ReplayedBatch | null {
  const at = (c: string) => columns.indexOf(c);
  const [id, created, master, key] = [at('id'), at('created_at'), at('master_id'), at('key_id')];
  if (id < 0 || created < 0 || master < 0 || key < 0) return null;
  const ids: number[] = [];
  const lines: string[] = [];
  const seconds = new Set<number>();
  const masters = new Set<number>();
  const keys = new Set<number>();
  for (const line of rows.toString('utf8').split('\n')) {
    if (line === '') continue;
    const row = JSON.parse(line) as unknown[];
    // created_at is DateTime64(3) text in UTC, "YYYY-MM-DD hh:mm:ss.sss".
    const ms = Date.parse(`${String(row[created]).replace(' ', 'T')}Z`);
    if (!Number.isFinite(ms)) return null;
    ids.push(Number(row[id]));
    lines.push(line);
    seconds.add(Math.floor(ms / 1000));
    masters.add(Number(row[master]));
    keys.add(Number(row[key]));
  }
  if (ids.length === 0) return null;
  return { ids, lines, seconds: [...seconds].sort((a, b) => a - b), masters: [...masters], keys: [...keys] };
}

/** The union of two spans (the rollups are repaired once over every replayed batch). */
export function widenSpan(a: ReplaySpan | null, b: ReplaySpan): ReplaySpan {
  const union = (x: readonly number[], y: readonly number[]) => [...new Set([...x, ...y])];
  if (!a) return { seconds: [...b.seconds], masters: [...b.masters], keys: [...b.keys] };
  return { seconds: union(a.seconds, b.seconds).sort((x, y) => x - y), masters: union(a.masters, b.masters), keys: union(a.keys, b.keys) };
}

/** The batch's records, read through the created_at skip index and partitions rather than the whole table. */
function spanOf(batch: ReplayedBatch): { where: string; params: QueryParams } {
  const params: QueryParams = { ids: batch.ids };
  return { where: withinRanges('created_at', "DateTime64(3, 'UTC')", bucketRanges(batch.seconds, 1), params), params };
}

/**
 * Inserts again, with deduplication off, the rows of the batch that `logs`
 * does not hold; the views feed the rollups as for any insert. Returns how
 * many.
 */
export async function restoreMissingLogs(ch: ClickHouse, batch: ReplayedBatch, columns: readonly string[]): Promise<number> {
  const span = spanOf(batch);
  const found = await ch.query<{ id: number }>(`SELECT DISTINCT id FROM logs WHERE ${span.where} AND has({ids:Array(UInt64)}, id)`, span.params);
  if (found.length === batch.ids.length) return 0;
  const present = new Set(found.map((r) => Number(r.id)));
  const missing = batch.lines.filter((_, i) => !present.has(batch.ids[i]!));
  if (missing.length === 0) return 0;
  await ch.insert('logs', `${missing.join('\n')}\n`, { format: 'JSONCompactEachRow', columns, deduplicate: false });
  return missing.length;
}

/**
 * Removes second copies of these ids from `logs`, merging each day partition
 * that holds one (OPTIMIZE ... FINAL DEDUPLICATE: the copies are identical
 * rows). For a batch replayed after a crash that came during its first
 * insert: ClickHouse can commit the part of `logs` before it records the
 * block for deduplication, and then takes the replay as new (the rollups, fed
 * under the same token, keep one copy). Returns the copies removed.
 */
export async function dedupLogIds(ch: ClickHouse, batch: ReplayedBatch): Promise<number> {
  const span = spanOf(batch);
  const twice = await ch.query<{ p: string; extra: number }>(
    `SELECT toString(toYYYYMMDD(created_at)) AS p, toUInt64(count() - uniqExact(id)) AS extra FROM logs
     WHERE ${span.where} AND has({ids:Array(UInt64)}, id) GROUP BY p HAVING extra > 0`,
    span.params,
  );
  for (const { p } of twice) {
    if (!/^\d{8}$/.test(p)) continue;
    await ch.command(`OPTIMIZE TABLE logs PARTITION ${p} FINAL DEDUPLICATE`);
  }
  return twice.reduce((n, r) => n + Number(r.extra), 0);
}
