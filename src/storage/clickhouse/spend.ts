/**
 * Spend for budgets (docs/spend.md): the sum of `cost` per key or master over
 * a range, read from the rollups for whole days, hours and minutes and from
 * the raw `logs` table for the seconds at the edges, so it equals the raw sum
 * exactly; and the cost backfill, which prices stored rows from current
 * prices. Amounts are decimal text, exact.
 */
import type { ClickHouse, QueryParams } from './client.js';
import { rebuildRollupsSql } from './rollups.js';
import { partSpan, rangeParts, type StatsFilter } from './stats.js';
import { picoText, toPico } from '../../contract/money.js';

/**
 * The spend of each of `ids` (key ids or master ids, by `column`) over
 * [since, until) in Unix seconds (since null: all time): decimal text, `0` for
 * ids without records. The range is cut as the statistics cut theirs
 * (rangeParts): a master's whole days, hours and minutes from logs_daily,
 * logs_hourly and logs_minute, a key's whole hours from logs_hourly_key and
 * its minutes from `logs`, whose sort key reads just those keys.
 */
export async function spendSince(
  ch: ClickHouse,
  column: 'key_id' | 'master_id',
  ids: number[],
  since: number | null,
  until: number,
): Promise<Map<number, string>> {
  const out = new Map<number, string>(ids.map((id) => [id, picoText(0)]));
  if (ids.length === 0) return out;
  const params: QueryParams = { ids };
  // rangeParts picks the rollups by which column is filtered, not by its value.
  const scope: StatsFilter = column === 'key_id' ? { key_id: ids[0] } : { master_id: ids[0] };
  const tables = new Map<string, string[]>();
  let n = 0;
  for (const part of rangeParts({ since: since ?? 0, until }, scope)) {
    const spans = tables.get(part.table) ?? tables.set(part.table, []).get(part.table)!;
    spans.push(partSpan(part, n++, params));
  }
  if (tables.size === 0) return out;
  // Aliases differ from column names: an alias equal to a column would shadow it (raw `logs` has `id`).
  const selects = [...tables].map(
    ([table, spans]) =>
      `SELECT ${column} AS sid, sum(cost) AS c FROM ${table} WHERE ${column} IN {ids:Array(UInt64)} AND (${spans.join(' OR ')}) GROUP BY sid`,
  );
  const rows = await ch.query<{ sid: number; spent: string }>(
    `SELECT sid, toString(sum(c)) AS spent FROM (\n${selects.join('\nUNION ALL\n')}\n) GROUP BY sid`,
    params,
  );
  // ClickHouse prints decimals without trailing zeros; the store and Postgres take them with 12 places.
  for (const r of rows) out.set(Number(r.sid), picoText(toPico(r.spent)));
  return out;
}

/** Prices as the backfill applies them: decimal text per model name. */
export interface BackfillPrice {
  name: string;
  input: string;
  output: string;
}

export interface BackfillSlice {
  /** Unix seconds, inclusive / exclusive; absent: unbounded. */
  since?: number;
  until?: number;
  /** Only rows whose cost is 0 (rows stored before prices existed, or unpriced): the default. */
  onlyZero: boolean;
}

const DECIMAL = /^\d{1,26}(\.\d{1,12})?$/;
const dec = (text: string): string => {
  if (!DECIMAL.test(text)) throw new Error(`not a price: ${text}`);
  return `toDecimal128('${text}', 12)`;
};

/**
 * Prices the slice's rows from `prices` (a model the list lacks: cost 0,
 * unpriced), then rebuilds the rollups over the rows touched so they agree
 * with `logs`; answers how many rows were priced and how many were unpriced.
 */
export async function backfillCost(ch: ClickHouse, prices: BackfillPrice[], slice: BackfillSlice, nowMs: number): Promise<{ priced: number; unpriced: number }> {
  const parts: string[] = [];
  const params: QueryParams = { names: prices.map((p) => p.name) };
  if (slice.since !== undefined) {
    parts.push("created_at >= {since:DateTime64(3, 'UTC')}");
    params.since = new Date(slice.since * 1000);
  }
  // Bounded by now even when unbounded: rows inserted while the mutation runs are priced at ingestion already.
  const until = new Date(slice.until !== undefined ? Math.min(slice.until * 1000, nowMs) : nowMs);
  parts.push("created_at < {until:DateTime64(3, 'UTC')}");
  params.until = until;
  if (slice.onlyZero) parts.push('cost = 0');
  const where = parts.join(' AND ');
  const known = prices.length > 0 ? 'has({names:Array(String)}, model)' : '0';
  const [counts] = await ch.query<{ priced: number; unpriced: number }>(
    `SELECT countIf(${known}) AS priced, countIf(NOT ${known}) AS unpriced FROM logs WHERE ${where}`,
    params,
  );
  const priced = Number(counts?.priced ?? 0);
  const unpriced = Number(counts?.unpriced ?? 0);
  if (priced + unpriced === 0) return { priced, unpriced };
  const zero = "toDecimal128('0', 12)";
  // transform() takes no Decimal: the price is the array element at the model's index (index 0, absent: the type's 0).
  const price = (side: 'input' | 'output') =>
    prices.length > 0 ? `arrayElement([${prices.map((p) => dec(p[side])).join(', ')}], indexOf({names:Array(String)}, model))` : zero;
  await ch.command(
    `ALTER TABLE logs UPDATE cost = tokens_in * ${price('input')} + tokens_out * ${price('output')}, unpriced = if(${known}, 0, 1)
     WHERE ${where} SETTINGS mutations_sync = 2`,
    params,
  );
  // A mutation does not pass through the materialized views: re-aggregate the rollup buckets up to `until`.
  for (const s of rebuildRollupsSql({ before: until })) await ch.command(s.sql, s.params);
  return { priced, unpriced };
}
