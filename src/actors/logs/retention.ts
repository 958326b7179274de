/**
 * Log retention: whole day partitions older than log_retention_days are
 * dropped from the raw table and every rollup (cheap, no rewrite; the day
 * rollups have month partitions, dropped once the whole month is older); rows
 * older than the cutoff that remain are deleted and their rollups rebuilt. Bodies older than log_body_retention_days are emptied (the rest
 * of the record stays). Then, past log_max_records, the oldest rows go first.
 * Last, the day partitions a deletion left without the projections of `logs`
 * (`DELETE /admin/logs`, or this pass: migrations 016, 018) get them back, but not the
 * partitions this pass trims (the cutoff's day, which the next day's pass
 * drops, and the oldest when log_max_records trimmed it): each would be
 * rewritten on every pass.
 */
import type { Logger } from '../../logger.js';
import type { ClickHouse } from '../../storage/clickhouse/client.js';
import { clearBodies, countLogs, dayPartitions, deleteLogs, dropPartition, nthOldest, partitionsLackingProjections, restoreProjections } from '../../storage/clickhouse/logs.js';
import type { Flags } from '../features/flags.js';

const day = 86_400_000;
const yyyymmdd = (ms: number): string => new Date(ms).toISOString().slice(0, 10).replace(/-/g, '');

export interface RetentionResult {
  /** Day partitions of the raw table dropped. */
  partitions_dropped: number;
  /** Partitions of the rollups dropped (their months or days lay wholly before the cutoff). */
  rollup_partitions_dropped: number;
  deleted_by_age: number;
  deleted_by_count: number;
  bodies_cleared: number;
  /** Day partitions of the raw table whose projections were written again. */
  projections_restored: number;
}

export async function enforceRetention(ch: ClickHouse, flags: Flags, now: number, log: Logger): Promise<RetentionResult> {
  const result: RetentionResult = { partitions_dropped: 0, rollup_partitions_dropped: 0, deleted_by_age: 0, deleted_by_count: 0, bodies_cleared: 0, projections_restored: 0 };
  if (flags.log_retention_days > 0) {
    const cutoff = now - flags.log_retention_days * day;
    const cutoffDay = yyyymmdd(cutoff);
    for (const { table, partition } of await dayPartitions(ch)) {
      // Day partitions (YYYYMMDD) or, for the day rollups, month partitions (YYYYMM): only when wholly before the cutoff day.
      if (partition < cutoffDay.slice(0, partition.length)) {
        await dropPartition(ch, table, partition);
        if (table === 'logs') result.partitions_dropped++;
        else result.rollup_partitions_dropped++;
      }
    }
    result.deleted_by_age = await deleteLogs(ch, { before: new Date(cutoff) });
  }
  if (flags.log_body_retention_days > 0 && flags.log_body_retention_days < flags.log_retention_days) {
    result.bodies_cleared = await clearBodies(ch, new Date(now - flags.log_body_retention_days * day));
  }
  if (flags.log_max_records > 0) {
    const total = await countLogs(ch);
    const excess = total - flags.log_max_records;
    if (excess > 0) {
      const newestToGo = await nthOldest(ch, excess);
      // Rows sharing that millisecond go too: a cap may undershoot by the ties of one millisecond.
      if (newestToGo !== null) result.deleted_by_count = await deleteLogs(ch, { before: new Date(newestToGo + 1) });
    }
  }
  // Partitions up to the newest one this pass trimmed keep going without the projections (see above).
  const trimmedUpTo = [
    flags.log_retention_days > 0 ? yyyymmdd(now - flags.log_retention_days * day) : '',
    result.deleted_by_count > 0 ? ((await dayPartitions(ch)).find((p) => p.table === 'logs')?.partition ?? '') : '',
  ].sort()[1]!;
  const restore = (await partitionsLackingProjections(ch)).filter((partition) => partition > trimmedUpTo);
  await restoreProjections(ch, restore);
  result.projections_restored = restore.length;
  if (retentionChanged(result) || result.projections_restored > 0) log.info(result, 'log retention enforced');
  return result;
}

/** Whether a pass removed or changed anything (statistics read before it may be out of date). */
export const retentionChanged = ({ projections_restored: _, ...removed }: RetentionResult): boolean => Object.values(removed).some((n) => n > 0);
