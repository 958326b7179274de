/**
 * Rows each query read, as ClickHouse reports them (the JSON format's
 * `statistics.rows_read`): deterministic whatever the machine's load, so the
 * bench can show how a read grows with the log count without timing it. The
 * reader runs the same SQL as the service (parameters rendered as the chDB
 * transport renders them) on its own chDB connection to the store.
 */
import { Session } from 'chdb';
import { inlineParams } from '../../storage/clickhouse/literals.js';
import type { ClickHouseReader, QueryParams } from '../../storage/clickhouse/client.js';

export interface CountingReader extends ClickHouseReader {
  /** Rows read and queries run since the last take(), then zeroed. */
  take(): { rowsRead: number; queries: number };
  close(): void;
}

/** A reader on an open embedded store (`<dataDir>/clickhouse`, database `gateway`, as openClickHouse makes it). */
export async function countingReader(dataDir: string): Promise<CountingReader> {
  const session = new Session(`${dataDir}/clickhouse`, { connectionArgs: ['--output_format_json_quote_64bit_integers=0'] });
  await session.queryAsync('USE gateway');
  let rowsRead = 0;
  let queries = 0;
  return {
    async query<T>(sql: string, params: QueryParams = {}): Promise<T[]> {
      const res = JSON.parse((await session.queryAsync(inlineParams(sql, params), { format: 'JSON' })).text()) as {
        data: T[];
        statistics: { rows_read: number };
      };
      rowsRead += Number(res.statistics.rows_read);
      queries++;
      return res.data;
    },
    take() {
      const out = { rowsRead, queries };
      rowsRead = 0;
      queries = 0;
      return out;
    },
    close: () => session.cleanup(),
  };
}
