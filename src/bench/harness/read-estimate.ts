/**
 * Rows a read takes from storage, measured without timing (the machine is
 * shared, row counts are not): the statements a read sends are captured, and
 * for each `EXPLAIN ESTIMATE` gives the rows of the granules its primary key
 * and partitions select, per table. On a ClickHouse server the same figure is
 * `read_rows` in system.query_log (chDB has no query log). harness/read-rows.ts
 * reads the rows a query really read (the JSON format's statistics) instead.
 */
import type { ClickHouse, ClickHouseReader, QueryParams } from '../../storage/clickhouse/client.js';

export interface ReadRows {
  rows: number;
  byTable: Record<string, number>;
}

/** Runs `read` against a reader that records its statements, then estimates each. */
export async function readRows(ch: ClickHouse, read: (reader: ClickHouseReader) => Promise<unknown>): Promise<ReadRows> {
  const sent: Array<{ sql: string; params?: QueryParams }> = [];
  const reader = {
    query: <T>(sql: string, params?: QueryParams) => {
      sent.push({ sql, params });
      return ch.query<T>(sql, params);
    },
  } as ClickHouseReader;
  await read(reader);
  const byTable: Record<string, number> = {};
  let rows = 0;
  for (const { sql, params } of sent) {
    for (const r of await ch.query<{ table: string; rows: number }>(`EXPLAIN ESTIMATE ${sql}`, params)) {
      byTable[r.table] = (byTable[r.table] ?? 0) + Number(r.rows);
      rows += Number(r.rows);
    }
  }
  return { rows, byTable };
}
