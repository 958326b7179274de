/**
 * The logs list as CSV, streamed from ClickHouse: the same filter (whereOf)
 * and the same order as listLogs, every matching row, no cap. ClickHouse
 * writes the CSV itself (CSVWithNames: a header line, RFC 4180 quoting), so
 * the service only passes bytes through.
 */
import type { ClickHouse } from './client.js';
import { whereOf, type LogFilter } from './logs.js';

/**
 * Columns by their stored names (an alias named like a column would shadow it
 * in WHERE); times are UTC, `YYYY-MM-DD hh:mm:ss.sss`, the form spreadsheets read.
 */
const CSV_COLUMNS = [
  'id',
  'created_at',
  'master_id',
  'key_id',
  '`group`',
  'model',
  'status_code',
  'latency_ms',
  'tokens_in',
  'tokens_out',
  'request_size',
  'response_size',
  'client_ip',
  'error_message',
  'audit_reason',
  'request_body',
  'response_body',
  'updated_at',
].join(', ');

/** The CSV bytes of every log matching `filter`, newest first; the first block is the header line. */
export function exportLogsCsv(ch: ClickHouse, filter: LogFilter): Promise<AsyncIterableIterator<Uint8Array>> {
  const { where, params } = whereOf(filter);
  return ch.stream(`SELECT ${CSV_COLUMNS} FROM logs ${where} ORDER BY created_at DESC, id DESC`, params, 'CSVWithNames');
}
