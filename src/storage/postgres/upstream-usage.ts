/**
 * Usage counters per upstream key and UTC day (upstream_usage_daily), fed by
 * /internal/stats/flush and summed over any window by the statistics summary.
 */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { int, text } from './row-types.js';

export interface UpstreamUsageItem {
  id: number;
  requests: number;
  success: number;
  failure: number;
}

/**
 * Adds the counters to the upstream keys' rows of the day of `now`
 * (milliseconds since the epoch, the service clock; a value in seconds is
 * accepted too). Unknown key ids are ignored. Runs inside the caller's
 * transaction; returns how many items were applied.
 */
export async function applyUpstreamUsage(tx: CommonQueryMethods, items: UpstreamUsageItem[], now: number): Promise<number> {
  if (items.length === 0) return 0;
  // Several items for one key in a batch are summed first: one row cannot be upserted twice by one statement.
  const sums = new Map<number, UpstreamUsageItem>();
  for (const it of items) {
    const s = sums.get(it.id) ?? { id: it.id, requests: 0, success: 0, failure: 0 };
    s.requests += it.requests;
    s.success += it.success;
    s.failure += it.failure;
    sums.set(it.id, s);
  }
  const rows = [...sums.values()];
  const seconds = now < 1e11 ? now : now / 1000;
  const applied = await tx.anyFirst(sql.type(z.object({ api_key_id: int }))`
    INSERT INTO upstream_usage_daily AS u (api_key_id, day, requests, success, failure)
    SELECT t.id, (to_timestamp(${seconds}) AT TIME ZONE 'UTC')::date, t.requests, t.success, t.failure
    FROM unnest(${sql.array(rows.map((r) => r.id), 'int8')}::int8[], ${sql.array(rows.map((r) => r.requests), 'int8')}::int8[],
                ${sql.array(rows.map((r) => r.success), 'int8')}::int8[], ${sql.array(rows.map((r) => r.failure), 'int8')}::int8[])
         AS t(id, requests, success, failure)
    WHERE EXISTS (SELECT 1 FROM upstream_keys k WHERE k.id = t.id)
    ON CONFLICT (api_key_id, day) DO UPDATE SET requests = u.requests + EXCLUDED.requests,
      success = u.success + EXCLUDED.success, failure = u.failure + EXCLUDED.failure
    RETURNING api_key_id`);
  const known = new Set(applied);
  return items.filter((it) => known.has(it.id)).length;
}

const keyUsage = z.object({ id: int, group_id: int, group_name: text, status: text, requests: int, success: int, failure: int });
export type UsageTotals = Pick<z.infer<typeof keyUsage>, 'requests' | 'success' | 'failure'>;

/** Counters per key within [sinceSec, untilSec] (whole UTC days containing them), optionally for one group. */
export async function usageByKey(
  db: CommonQueryMethods,
  q: { sinceSec?: number; untilSec?: number; groupId?: number },
): Promise<Array<z.infer<typeof keyUsage>>> {
  const conds = [sql.fragment`true`];
  if (q.sinceSec !== undefined) conds.push(sql.fragment`u.day >= (to_timestamp(${q.sinceSec}) AT TIME ZONE 'UTC')::date`);
  if (q.untilSec !== undefined) conds.push(sql.fragment`u.day <= (to_timestamp(${q.untilSec}) AT TIME ZONE 'UTC')::date`);
  const window = sql.join(conds, sql.fragment` AND `);
  return [...(await db.any(sql.type(keyUsage)`
    SELECT k.id, k.group_id, g.name AS group_name, k.status,
      COALESCE(sum(u.requests), 0)::int8 AS requests, COALESCE(sum(u.success), 0)::int8 AS success,
      COALESCE(sum(u.failure), 0)::int8 AS failure
    FROM upstream_keys k JOIN provider_groups g ON g.id = k.group_id
    LEFT JOIN upstream_usage_daily u ON u.api_key_id = k.id AND ${window}
    WHERE k.deleted_at IS NULL ${q.groupId !== undefined ? sql.fragment`AND k.group_id = ${q.groupId}` : sql.fragment``}
    GROUP BY k.id, k.group_id, g.name, k.status ORDER BY k.id`))];
}
