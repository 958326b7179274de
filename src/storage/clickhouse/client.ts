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
   * Inserts line-delimited JSON bytes as they are: ClickHouse parses them.
   * JSONEachRow (the default): unknown fields are skipped, omitted ones get
   * their column DEFAULT. JSONCompactEachRow: one array per row, its values in
   * the order of `columns`; columns not listed get their DEFAULT. Either way
   * DateTime values may be ISO 8601 strings (best-effort parsing).
   */
  insert(table: string, rows: Buffer | string, options?: InsertOptions): Promise<void>;
  /** SELECT returning rows as objects (JSONEachRow; 64-bit integers as numbers). */
  query<T = Record<string, unknown>>(sql: string, params?: QueryParams): Promise<T[]>;
  /**
   * SELECT whose result arrives as bytes in `format`, read from the store as the
   * caller consumes them (the next block is asked for only after the previous
   * one was taken: backpressure). Resolves once the first block is there, so a
   * failing query rejects rather than yielding a broken stream; leaving the
   * iteration early cancels the query.
   */
  stream(sql: string, params?: QueryParams, format?: StreamFormat): Promise<AsyncIterableIterator<Uint8Array>>;
  /** True when the store answers; never rejects. */
  ping(): Promise<boolean>;
  /** Idempotent; waits for calls in flight. Later calls reject. */
  close(): Promise<void>;
}

/** The read side alone: what statistics queries need (a cache can stand in for it). */
export type ClickHouseReader = Pick<ClickHouse, 'query'>;

/** Output formats a streamed SELECT may ask for. */
export type StreamFormat = 'CSVWithNames' | 'CSV' | 'TSVWithNames' | 'JSONEachRow';

/** The line-delimited JSON formats an insert takes. */
export type InsertFormat = 'JSONEachRow' | 'JSONCompactEachRow';

export interface InsertOptions {
  /** Default JSONEachRow. */
  format?: InsertFormat;
  /** INSERT INTO t (columns): required for JSONCompactEachRow, whose rows carry no names. */
  columns?: readonly string[];
  /**
   * `insert_deduplication_token`: an insert with a token seen among the last
   * `non_replicated_deduplication_window` blocks of a table is dropped, in the
   * table and in each materialized view's target (dedupSettings).
   */
  dedupToken?: string;
  /** false: `insert_deduplicate = 0`, for rows that must go in even if an identical block was recorded (a crash's repair). */
  deduplicate?: boolean;
}

/** The settings of an insert's deduplication: a token reaches the rollups' views too; none at all when it is off. */
export function dedupSettings(options: InsertOptions | undefined): Record<string, string | number> {
  if (options?.deduplicate === false) return { insert_deduplicate: 0 };
  if (!options?.dedupToken) return {};
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(options.dedupToken)) throw new Error('an insert deduplication token is 1-128 characters of [A-Za-z0-9_-]');
  return { insert_deduplication_token: options.dedupToken, deduplicate_blocks_in_dependent_materialized_views: 1 };
}

/** The INSERT statement's table and column list, checked: both are spliced into the SQL text. */
export function insertTarget(table: string, options: InsertOptions = {}): { format: InsertFormat; columns?: readonly string[] } {
  assertTableName(table);
  const format = options.format ?? 'JSONEachRow';
  if (format !== 'JSONEachRow' && format !== 'JSONCompactEachRow') throw new Error(`unsupported insert format: ${String(format)}`);
  const { columns } = options;
  if (columns !== undefined) {
    if (columns.length === 0) throw new Error('an insert column list must not be empty');
    for (const c of columns) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(c)) throw new Error(`invalid ClickHouse column name: ${JSON.stringify(c)}`);
  } else if (format === 'JSONCompactEachRow') {
    throw new Error('a JSONCompactEachRow insert needs its column list');
  }
  return columns ? { format, columns } : { format };
}

/**
 * The most partitions one insert may touch. ClickHouse's own default, set on
 * every insert so that a server profile with a lower one cannot refuse what
 * the writer cut to fit it (the writer cuts batches by it: docs/log-pipeline.md).
 */
export const MAX_PARTITIONS_PER_INSERT = 100;

/**
 * The most UTC days one insert into `logs` may span: each day is a partition of
 * `logs` and of the grains tables' seconds and minutes, and may be one more month
 * of their hours and days (020), so half of MAX_PARTITIONS_PER_INSERT keeps the
 * views' inserts within it too.
 */
export const LOG_DAYS_PER_INSERT = MAX_PARTITIONS_PER_INSERT / 2;

/** Settings every NDJSON insert uses, on either transport. */
export const INSERT_SETTINGS = {
  input_format_skip_unknown_fields: 1,
  date_time_input_format: 'best_effort',
  max_partitions_per_insert_block: String(MAX_PARTITIONS_PER_INSERT), // a UInt64 setting: text, as the HTTP client types it
} as const;

/** Table names are spliced into INSERT text, so only plain identifiers pass. */
export function assertTableName(table: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/.test(table)) {
    throw new Error(`invalid ClickHouse table name: ${JSON.stringify(table)}`);
  }
}
