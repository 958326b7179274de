/**
 * The log messages that routes reach (lists, export, deletion, the pipeline
 * and its dead letters, the cost backfill), with the schemas of what each
 * receives. Plain data: the HTTP layer imports this module without the actor's
 * code or its stores.
 */
import { handles } from '../../contract/handle.js';
import { logDateTime, unixTime } from '../../contract/value-rules.js';
import type { JSONSchema } from '../../contract/validate.js';

/**
 * The LogRecord as the data plane sends it (its row: storage/clickhouse/logs-table.ts). Unknown fields are
 * tolerated and not stored, so a newer data plane can send more than this version stores.
 */
const uint = (max = 4294967295): JSONSchema => ({ type: 'integer', minimum: 0, maximum: max });
const text = (maxLength: number): JSONSchema => ({ type: 'string', maxLength });

export const logRecordSchema: JSONSchema = {
  type: 'object',
  required: ['key_id', 'master_id', 'status_code'],
  properties: {
    key_id: uint(Number.MAX_SAFE_INTEGER),
    master_id: uint(Number.MAX_SAFE_INTEGER),
    group: text(200),
    model: text(200),
    status_code: { type: 'integer', minimum: 0, maximum: 999 },
    latency_ms: uint(),
    tokens_in: uint(),
    tokens_out: uint(),
    request_size: uint(),
    response_size: uint(),
    client_ip: text(64),
    error_message: text(65536),
    audit_reason: text(1024),
    request_body: { type: 'string' },
    response_body: { type: 'string' },
    createdAt: logDateTime('RFC 3339, within log time (docs/log-pipeline.md)'),
  },
};

/** The lists' filters (the export takes them without limit and offset). */
export const logFilters = {
  master_id: { type: 'integer', minimum: 0 },
  key_id: { type: 'integer', minimum: 0 },
  model: { type: 'string', maxLength: 200 },
  group: { type: 'string', maxLength: 200 },
  status_code: { type: 'integer', minimum: 0, maximum: 999 },
  since: unixTime('Unix seconds, inclusive'),
  until: unixTime('Unix seconds, exclusive'),
  error_only: { type: 'boolean', description: 'only status >= 400 or a non-empty error_message' },
  limit: { type: 'integer', minimum: 1, default: 50, description: 'at most 200' },
  offset: { type: 'integer', minimum: 0, default: 0 },
} as const;

/** The lists' filters plus keyset paging. */
const logListQuery = {
  ...logFilters,
  cursor: {
    type: 'string',
    pattern: '^[0-9]{1,15}-[0-9]{1,20}$',
    description: "a page's next_cursor: the records after that page's last one (newest first; offset then skips from there)",
  },
} as const;

const { limit: _limit, offset: _offset, ...exportFilters } = logFilters;

const deadLetterParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[0-9]{13}-[0-9]{6}$' } },
} as const;

export const logs = handles('logs', {
  /**
   * POST /logs: one record, a JSON array of them, or NDJSON. Parsed by the logs actor record by record (parser
   * `ndjson`), each record checked by the validator compiled from this declaration's record schema (record.ts).
   */
  ingest: { body: { oneOf: [logRecordSchema, { type: 'array', items: logRecordSchema }] }, parser: 'ndjson' },
  /** The admin's list (every record) and the tenant's (its own: the actor narrows it). */
  list: { query: { type: 'object', properties: logListQuery } },
  export: { query: { type: 'object', properties: exportFilters } },
  delete: {
    query: {
      type: 'object',
      required: ['before'],
      properties: {
        before: logDateTime('RFC 3339; records created before it are deleted'),
        master_id: logFilters.master_id,
        key_id: logFilters.key_id,
        model: logFilters.model,
        status_code: logFilters.status_code,
      },
    },
  },
  pipeline: {},
  deadLetters: {},
  replayDeadLetter: { params: deadLetterParams },
  deleteDeadLetter: { params: deadLetterParams },
  costBackfill: {
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        since: unixTime('Unix seconds, inclusive; absent: the oldest record'),
        until: unixTime('Unix seconds, exclusive; absent: now'),
        only_zero: { type: 'boolean', default: true, description: 'only rows whose cost is 0 (true), or every row of the slice (false)' },
      },
    },
  },
});
