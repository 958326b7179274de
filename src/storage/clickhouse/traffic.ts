/**
 * Traffic per master over a time range, read from the rollups (never the raw
 * logs): the alert detector's input. Bounds bind as exact instants.
 */
import type { ClickHouse } from './client.js';

export interface MasterTraffic {
  master_id: number;
  requests: number;
  tokens: number;
}

const TABLES = {
  minute: { table: 'logs_minute', bucket: 'minute' },
  hour: { table: 'logs_hourly', bucket: 'hour' },
} as const;

/** Requests and tokens (in + out) per master of the buckets starting in [from, to); master 0 included. */
export async function trafficByMaster(ch: ClickHouse, rollup: keyof typeof TABLES, from: number, to: number): Promise<MasterTraffic[]> {
  const { table, bucket } = TABLES[rollup];
  // Aliases differ from the column names: an alias equal to a column would shadow it in the sums.
  const rows = await ch.query<{ master_id: number; req: number; tok: number }>(
    `SELECT master_id, sum(requests) AS req, sum(tokens_in) + sum(tokens_out) AS tok FROM ${table}
     WHERE ${bucket} >= {from:DateTime64(3, 'UTC')} AND ${bucket} < {to:DateTime64(3, 'UTC')}
     GROUP BY master_id`,
    { from: new Date(from), to: new Date(to) },
  );
  return rows.map((r) => ({ master_id: Number(r.master_id), requests: Number(r.req), tokens: Number(r.tok) }));
}
