/**
 * Why an insert failed, told by ClickHouse's error code: a refusal (the rows
 * themselves are at fault: they cannot be parsed or do not fit a column, or
 * one block spans too many partitions) or an outage (the store cannot take
 * them now: connection, timeout, memory, disk, a missing table or a lost
 * permission). A refusal is never retried as it is: the writer isolates the
 * refused rows and dead-letters them. An outage is retried until it ends.
 * Anything not known to be a refusal is an outage, so that no row is ever
 * dead-lettered for the store's own trouble. docs/log-pipeline.md lists the codes.
 */

export type InsertErrorKind = 'refusal' | 'outage';

export interface InsertError {
  kind: InsertErrorKind;
  /** ClickHouse's numeric code, a system error code (ECONNREFUSED), or null when the error carried none. */
  code: number | string | null;
  message: string;
}

/** Data errors: the rows sent are at fault, whatever the store's state. */
export const REFUSAL_CODES: ReadonlyMap<number, string> = new Map([
  [6, 'CANNOT_PARSE_TEXT'],
  [25, 'CANNOT_PARSE_ESCAPE_SEQUENCE'],
  [26, 'CANNOT_PARSE_QUOTED_STRING'],
  [27, 'CANNOT_PARSE_INPUT_ASSERTION_FAILED'],
  [32, 'ATTEMPT_TO_READ_AFTER_EOF'],
  [33, 'CANNOT_READ_ALL_DATA'],
  [38, 'CANNOT_PARSE_DATE'],
  [41, 'CANNOT_PARSE_DATETIME'],
  [53, 'TYPE_MISMATCH'],
  [69, 'ARGUMENT_OUT_OF_BOUND'],
  [70, 'CANNOT_CONVERT_TYPE'],
  [72, 'CANNOT_PARSE_NUMBER'],
  [117, 'INCORRECT_DATA'],
  [130, 'CANNOT_READ_ARRAY_FROM_TEXT'],
  [131, 'TOO_LARGE_STRING_SIZE'],
  [190, 'SIZES_OF_ARRAYS_DONT_MATCH'],
  [321, 'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE'],
  [349, 'CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN'],
  [407, 'DECIMAL_OVERFLOW'],
]);

/**
 * TOO_MANY_PARTS (252) names two things: "Too many partitions for single
 * INSERT block" (the rows span too many days: a refusal, cured by splitting)
 * and "Too many parts" (merges are behind: an outage, cured by waiting).
 */
const TOO_MANY_PARTS = 252;
const tooManyPartitions = /too many partitions/i;

/**
 * Outages named for the documentation (every code not in REFUSAL_CODES is
 * one); the point of the list is to show which store troubles were thought of.
 */
export const OUTAGE_CODES: ReadonlyMap<number, string> = new Map([
  [16, 'NO_SUCH_COLUMN_IN_TABLE'],
  [60, 'UNKNOWN_TABLE'],
  [81, 'UNKNOWN_DATABASE'],
  [159, 'TIMEOUT_EXCEEDED'],
  [160, 'TOO_SLOW'],
  [164, 'READONLY'],
  [173, 'CANNOT_ALLOCATE_MEMORY'],
  [202, 'TOO_MANY_SIMULTANEOUS_QUERIES'],
  [203, 'NO_FREE_CONNECTION'],
  [209, 'SOCKET_TIMEOUT'],
  [210, 'NETWORK_ERROR'],
  [236, 'ABORTED'],
  [241, 'MEMORY_LIMIT_EXCEEDED'],
  [242, 'TABLE_IS_READ_ONLY'],
  [243, 'NOT_ENOUGH_SPACE'],
  [252, 'TOO_MANY_PARTS (merges behind)'],
  [285, 'TOO_FEW_LIVE_REPLICAS'],
  [319, 'UNKNOWN_STATUS_OF_INSERT'],
  [394, 'QUERY_WAS_CANCELLED'],
  [425, 'SYSTEM_ERROR'],
  [497, 'ACCESS_DENIED'],
  [516, 'AUTHENTICATION_FAILED'],
  [999, 'KEEPER_EXCEPTION'],
  [1000, 'POCO_EXCEPTION'],
]);

const codeInText = /\bCode: (\d+)\./;

/**
 * The ClickHouse code of an error from either transport: chDB sets
 * `clickhouseCode` and writes "Code: NNN." in its message; @clickhouse/client's
 * ClickHouseError carries the code as a string of digits in `code`. A
 * connection error of Node carries its own `code` (ECONNREFUSED, ...).
 */
export function errorCode(err: unknown): number | string | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { clickhouseCode?: unknown; code?: unknown; message?: unknown };
  if (typeof e.clickhouseCode === 'number' && Number.isInteger(e.clickhouseCode)) return e.clickhouseCode;
  if (typeof e.code === 'string' && /^\d+$/.test(e.code)) return Number(e.code);
  if (typeof e.code === 'number' && Number.isInteger(e.code)) return e.code;
  const m = typeof e.message === 'string' ? codeInText.exec(e.message) : null;
  if (m) return Number(m[1]);
  if (typeof e.code === 'string' && e.code !== '') return e.code;
  return null;
}

/** At most this much of an error's text is kept (ClickHouse appends whole rows to some). */
const maxMessage = 1000;

export function classifyInsertError(err: unknown): InsertError {
  const code = errorCode(err);
  const message = (err instanceof Error ? err.message : String(err)).slice(0, maxMessage);
  let kind: InsertErrorKind = 'outage';
  if (typeof code === 'number') {
    if (REFUSAL_CODES.has(code)) kind = 'refusal';
    else if (code === TOO_MANY_PARTS && tooManyPartitions.test(message)) kind = 'refusal';
  }
  return { kind, code, message };
}
