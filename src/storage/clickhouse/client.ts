/**
 * The ClickHouse log store: one dialect, two transports (embedded chDB or a
 * ClickHouse server over HTTP through @clickhouse/client). Queries name their
 * parameters with the {name:Type} syntax and never splice values themselves: a
 * server binds them, and the chDB transport renders them as typed, escaped
 * literals (literals.ts) so that its reads can run in parallel.
 */

/**
 * Values for `{name:Type}` placeholders. A `Date` is sent as a Unix timestamp
 * with milliseconds, so it means the same instant whatever the server's time
 * zone; pass a `bigint` for 64-bit values beyond 2^53.
 */
export type QueryParams = Record<string, unknown>;

export interface ClickHouse {
  /** `chdb` or `http`. */
  readonly transport: 'chdb' | 'http';
  /** DDL and mutations; no result. */
  command(sql: string, params?: QueryParams): Promise<void>;
  /**
   * Inserts NDJSON (JSONEachRow) bytes as they are: ClickHouse parses them.
   * Unknown fields are skipped, omitted ones get their column DEFAULT, and
   * DateTime values may be ISO 8601 strings (best-effort parsing).
   */
  insert(table: string, ndjson: Buffer | string): Promise<void>;
  /** SELECT returning rows as objects (JSONEachRow; 64-bit integers as numbers). */
  query<T = Record<string, unknown>>(sql: string, params?: QueryParams): Promise<T[]>;
  /** True when the store answers; never rejects. */
  ping(): Promise<boolean>;
  /** Idempotent; waits for calls in flight. Later calls reject. */
  close(): Promise<void>;
}

/** The read side alone: what statistics queries need (a cache can stand in for it). */
export type ClickHouseReader = Pick<ClickHouse, 'query'>;

/** Settings every NDJSON insert uses, on either transport. */
export const INSERT_SETTINGS = {
  input_format_skip_unknown_fields: 1,
  date_time_input_format: 'best_effort',
} as const;

/** Table names are spliced into INSERT text, so only plain identifiers pass. */
export function assertTableName(table: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/.test(table)) {
    throw new Error(`invalid ClickHouse table name: ${JSON.stringify(table)}`);
  }
}
