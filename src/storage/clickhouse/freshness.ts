/**
 * How fresh the stored logs are: the creation time of the newest stored
 * record, overall or of one master. The rollups say which minute (or, per
 * master, which hour) holds it, read from the end of their sort order; only
 * that stretch of the raw table is then read for the exact time.
 */
import type { ClickHouseReader } from './client.js';

/** Unix milliseconds of the newest stored record; null when there is none. */
export async function newestRecordMs(ch: ClickHouseReader, masterId?: number): Promise<number | null> {
  const sql =
    masterId === undefined
      ? `SELECT toUnixTimestamp64Milli(max(created_at)) AS ms FROM logs
         WHERE created_at >= (SELECT t FROM logs_total_grains WHERE grain = 60 ORDER BY grain DESC, t DESC LIMIT 1)`
      : `SELECT toUnixTimestamp64Milli(max(created_at)) AS ms FROM logs
         WHERE master_id = {master_id:UInt64}
           AND created_at >= (SELECT hour FROM logs_hourly WHERE master_id = {master_id:UInt64} ORDER BY hour DESC LIMIT 1)`;
  const rows = await ch.query<{ ms: number | null }>(sql, masterId === undefined ? {} : { master_id: masterId });
  const ms = Number(rows[0]?.ms ?? 0);
  return ms > 0 ? ms : null; // max() over no rows is the epoch
}
