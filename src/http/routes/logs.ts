/** Log ingestion (the data plane), log pages and deletion (admin), own logs (tenant). */
import { AppError } from '../../errors.js';
import { logRecordSchema } from '../../actors/logs/record.js';
import { isNdjson } from '../../actors/logs/parse.js';
import { rawRoute, type Route } from '../route.js';
import { deletedAt, type JSONSchema } from '../schema.js';

const MiB = 1024 * 1024;
const int = { type: 'integer' };
const str = { type: 'string' };

const logView: JSONSchema = {
  type: 'object',
  properties: {
    id: int, key_id: int, master_id: int, group: str, model: str, status_code: int, latency_ms: int,
    tokens_in: int, tokens_out: int, request_size: int, response_size: int, client_ip: str,
    error_message: str, audit_reason: str, request_body: str, response_body: str,
    createdAt: str, updatedAt: str, deletedAt,
  },
};

const logFilters: Record<string, JSONSchema> = {
  master_id: { type: 'integer', minimum: 0 },
  key_id: { type: 'integer', minimum: 0 },
  model: { type: 'string', maxLength: 200 },
  group: { type: 'string', maxLength: 200 },
  status_code: { type: 'integer', minimum: 0, maximum: 999 },
  since: { type: 'integer', minimum: 0, description: 'Unix seconds, inclusive' },
  until: { type: 'integer', minimum: 0, description: 'Unix seconds, exclusive' },
  error_only: { type: 'boolean', description: 'only status >= 400 or a non-empty error_message' },
  limit: { type: 'integer', minimum: 1, default: 50, description: 'at most 200' },
  offset: { type: 'integer', minimum: 0, default: 0 },
};

const logPage: JSONSchema = {
  type: 'object',
  properties: { items: { type: 'array', items: logView }, total: int, limit: int, offset: int },
  required: ['items', 'total', 'limit', 'offset'],
};

/** The admin's and the tenant's log lists: one declaration, the actor narrows a tenant to its own records. */
const logListRoute = (path: string, role: 'admin' | 'master', summary: string, tag: string): Route => ({
  method: 'GET',
  path,
  role,
  summary,
  description:
    'A record is listed once the log writer has flushed it to ClickHouse: up to SVC_LOG_FLUSH_MS (default 1 s) after ' +
    'its 202, longer while ClickHouse is slow or down (the record waits in memory or in the spool, never lost).',
  tags: [tag],
  query: { type: 'object', properties: logFilters },
  success: { status: 200, schema: logPage },
  actor: 'logs',
  message: 'list',
});

export const logRoutes: Route[] = [
  rawRoute({
    method: 'POST',
    path: '/logs',
    role: 'public',
    raw: true,
    summary: 'Ingest one LogRecord, a JSON array of them, or NDJSON (application/x-ndjson); 202 once accepted',
    description: 'Accepted records become readable (lists, statistics) when their batch is written: within SVC_LOG_FLUSH_MS (default 1 s) while ClickHouse keeps up.',
    tags: ['logs'],
    body: { oneOf: [logRecordSchema, { type: 'array', items: logRecordSchema }] },
    bodyLimit: 16 * MiB,
    success: {
      status: 202,
      schema: { type: 'object', properties: { accepted: int, id: int }, required: ['accepted'] },
    },
    handler: (input, app) => {
      // A single record may be at most 4 MiB; only batches may use the 16 MiB allowance.
      const first = input.body.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
      const batch = isNdjson(input.contentType) || first === 0x5b;
      if (!batch && input.body.length > 4 * MiB) {
        throw new AppError('payload_too_large', `a single log record may be at most ${4 * MiB} bytes`, { limit: 4 * MiB });
      }
      return app.ask('logs', 'ingest', input);
    },
  }),
  logListRoute('/admin/logs', 'admin', 'Log records, newest first, with request bodies; total is exact', 'logs'),
  {
    method: 'DELETE',
    path: '/admin/logs',
    role: 'admin',
    summary: 'Delete log records created before `before` (RFC 3339), optionally narrowed; rollups follow',
    tags: ['logs'],
    query: {
      type: 'object',
      required: ['before'],
      properties: {
        before: { type: 'string', format: 'date-time', description: 'RFC 3339; records created before it are deleted' },
        master_id: logFilters.master_id!,
        key_id: logFilters.key_id!,
        model: logFilters.model!,
        status_code: logFilters.status_code!,
      },
    },
    success: { status: 200, schema: { type: 'object', properties: { deleted: int }, required: ['deleted'] } },
    actor: 'logs',
    message: 'delete',
  },
  logListRoute('/v1/logs', 'master', "The tenant's own log records (same filters as the admin list; master_id is always the caller)", 'tenant'),
];
