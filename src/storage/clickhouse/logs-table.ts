/**
 * The `logs` table as TypeScript sees it, in one place beside its SQL
 * (sql/clickhouse/001_logs.sql): the columns the service writes and their
 * order, a record's row encoding (one JSONCompactEachRow line), the row read
 * back, and the partition of a written row (the table is PARTITION BY
 * toYYYYMMDD(created_at), and so are its minute and hour rollups).
 * The test suite checks the column list against the table.
 */

/**
 * The `logs` columns the service writes, in the order of toRow's arrays (the
 * writer inserts JSONCompactEachRow over this list). `updated_at` is left to
 * its DEFAULT (created_at). created_at comes last: partitionOfRow reads it there.
 */
export const LOG_COLUMNS = [
  'id',
  'key_id',
  'master_id',
  'group',
  'model',
  'status_code',
  'latency_ms',
  'tokens_in',
  'tokens_out',
  'request_size',
  'response_size',
  'cost',
  'unpriced',
  'client_ip',
  'error_message',
  'audit_reason',
  'request_body',
  'response_body',
  'created_at',
] as const;

export type LogColumn = (typeof LOG_COLUMNS)[number];

/** How each column reads back in a view: an integer, a number (cost: Decimal(38,12)), a string, or a time (DateTime64(3) text). */
export const LOG_COLUMN_KINDS: Record<LogColumn | 'updated_at', 'integer' | 'number' | 'string' | 'time'> = {
  id: 'integer',
  key_id: 'integer',
  master_id: 'integer',
  group: 'string',
  model: 'string',
  status_code: 'integer',
  latency_ms: 'integer',
  tokens_in: 'integer',
  tokens_out: 'integer',
  request_size: 'integer',
  response_size: 'integer',
  cost: 'number',
  unpriced: 'integer',
  client_ip: 'string',
  error_message: 'string',
  audit_reason: 'string',
  request_body: 'string',
  response_body: 'string',
  created_at: 'time',
  updated_at: 'time',
};

/** The values a row is made of: a validated record's fields (others are not stored). */
export type LogRowSource = { key_id: number; master_id: number; status_code: number; [field: string]: unknown };

/** What the record cost when it was accepted (decimal text, 12 places at most) and whether its model had a price. */
export interface RowCost {
  cost: string;
  unpriced: boolean;
}

/**
 * A record's row: its values in LOG_COLUMNS order, absent fields as their
 * column DEFAULT (0 or ''), with the id, its cost (decimal text: ClickHouse
 * reads a quoted Decimal exactly) and creation time (DateTime64(3) text in
 * UTC). An array rather than an object: JSON.stringify of 19 values without
 * their names is about half the work, and ClickHouse reads it faster.
 */
export function toRow(rec: LogRowSource, id: number, createdAt: string, keepRequestBody: boolean, cost: RowCost): unknown[] {
  return [
    id,
    rec.key_id,
    rec.master_id,
    rec.group ?? '',
    rec.model ?? '',
    rec.status_code,
    rec.latency_ms ?? 0,
    rec.tokens_in ?? 0,
    rec.tokens_out ?? 0,
    rec.request_size ?? 0,
    rec.response_size ?? 0,
    cost.cost,
    cost.unpriced ? 1 : 0,
    rec.client_ip ?? '',
    rec.error_message ?? '',
    rec.audit_reason ?? '',
    keepRequestBody ? (rec.request_body ?? '') : '',
    rec.response_body ?? '',
    createdAt,
  ];
}

/** A row as read back: the columns, with the times as DateTime64 text in UTC. */
export interface LogRow {
  id: number;
  key_id: number;
  master_id: number;
  group: string;
  model: string;
  status_code: number;
  latency_ms: number;
  tokens_in: number;
  tokens_out: number;
  request_size: number;
  response_size: number;
  /** The currency unit (docs/spend.md), as ClickHouse writes Decimal(38,12) in JSON. */
  cost: number;
  /** 1 when the record's model had no price (its cost is then 0). */
  unpriced: number;
  client_ip: string;
  error_message: string;
  audit_reason: string;
  request_body: string;
  response_body: string;
  /** Aliases differ from the columns so they do not shadow them in WHERE. */
  created_text: string;
  updated_text: string;
}

/** The SELECT list that reads a LogRow. */
export const LOG_ROW_SELECT = [
  ...LOG_COLUMNS.filter((c) => c !== 'created_at').map((c) => (c === 'group' ? '`group`' : c)),
  'toString(created_at) AS created_text',
  'toString(updated_at) AS updated_text',
].join(', ');

const digit = (b: number): number => b - 0x30;
/** Offsets of the digits of YYYY-MM-DD after the opening quote. */
const DATE_DIGITS = [1, 2, 3, 4, 6, 7, 9, 10] as const;

/**
 * The partition (YYYYMMDD of created_at) of one written row, the line
 * `data[start, end)` without its newline, read from the bytes where toRow
 * puts it: the line ends `,"YYYY-MM-DD HH:MM:SS.mmm"]`. Any other shape
 * (a JSONEachRow object of an old spool file, a time text of another form)
 * gives -1: such rows travel together, and the insert tells.
 */
export function partitionOfRow(data: Buffer, start: number, end: number): number {
  const q = end - 26; // the opening quote of the 23-character time text
  if (q < start || data[end - 1] !== 0x5d || data[end - 2] !== 0x22 || data[q] !== 0x22 || data[q + 5] !== 0x2d || data[q + 8] !== 0x2d) return -1;
  let key = 0;
  for (const i of DATE_DIGITS) {
    const d = digit(data[q + i]!);
    if (d < 0 || d > 9) return -1;
    key = key * 10 + d;
  }
  return key;
}
