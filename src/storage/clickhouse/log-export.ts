/**
 * The logs list as CSV, streamed from ClickHouse: the same filter (whereOf)
 * and the same order as listLogs, every matching row, no cap. ClickHouse
 * writes the CSV itself (CSVWithNames: a header line, RFC 4180 quoting), so
 * the service only passes bytes through.
 */
import type { ClickHouse } from './client.js';
import { LOG_COLUMNS } from './logs-table.js';
import { whereOf, type LogFilter } from './logs.js';

/**
 * The table's columns by their stored names (an alias named like a column would
 * shadow it in WHERE), id, creation time and tenant first, updated_at last; times are
 * UTC, `YYYY-MM-DD hh:mm:ss.sss`, the form spreadsheets read.
 */
const CSV_COLUMNS = [
  'id',
  'created_at',
  'master_id',
  ...LOG_COLUMNS.filter((c) => c !== 'id' && c !== 'created_at' && c !== 'master_id'),
  'updated_at',
]
  .map((c) => (c === 'group' ? '`group`' : c))
  .join(', ');

/** The CSV bytes of every log matching `filter`, newest first; the first block is the header line. */
export function exportLogsCsv(ch: ClickHouse, filter: LogFilter): Promise<AsyncIterableIterator<Uint8Array>> {
  const { where, params } = whereOf(filter);
  return ch.stream(`SELECT ${CSV_COLUMNS} FROM logs ${where} ORDER BY created_at DESC, id DESC`, params, 'CSVWithNames');
}
