/** Log ingestion (the data plane), log pages and deletion (admin), own logs (tenant). */
import { AppError } from '../../errors.js';
import { isNdjson } from '../../actors/logs/parse.js';
import { logViewFields } from '../../actors/logs/view.js';
import { actorRoute, rawRoute, type Route } from '../route.js';
import { logs } from '../../actors/logs/handles.js';
import { deletedAt } from '../schema.js';
import type { JSONSchema } from '../../contract/validate.js';

const MiB = 1024 * 1024;
const int = { type: 'integer' };
const str = { type: 'string' };

/** The fields follow the logs table (storage/clickhouse/logs-table.ts, through the actor's view). */
const logView: JSONSchema = {
  type: 'object',
  properties: { ...Object.fromEntries(Object.entries(logViewFields).map(([f, type]) => [f, { type }])), deletedAt },
};

const errorCode: JSONSchema = { type: ['integer', 'string', 'null'], description: "ClickHouse's error code (or a connection error's), null when none" };
const insertError: JSONSchema = { type: 'object', properties: { code: errorCode, message: str }, required: ['code', 'message'] };

const pipelineStatus: JSONSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'], description: 'degraded while inserts fail or dead letters exist' },
    accepted: { ...int, description: 'records accepted by this node since it started' },
    stored: { ...int, description: 'records this node stored since it started' },
    pending: { ...int, description: 'records waiting in memory and in the disk spool' },
    dead_lettered: { ...int, description: 'records in the dead letters now' },
    last_error: {
      oneOf: [{ type: 'null' }, { type: 'object', properties: { code: errorCode, message: str, at: { type: 'string', description: 'RFC 3339' } }, required: ['code', 'message', 'at'] }],
      description: 'the last failed insert, if any',
    },
    newest_stored_at: { type: ['string', 'null'], description: 'RFC 3339 creation time of the newest stored record; null when none' },
  },
  required: ['status', 'accepted', 'stored', 'pending', 'dead_lettered', 'last_error', 'newest_stored_at'],
};

const deadLetter: JSONSchema = {
  type: 'object',
  properties: {
    id: str,
    table: str,
    records: int,
    code: errorCode,
    message: str,
    at: { type: 'string', description: 'RFC 3339: when the rows were (last) refused' },
    bytes: int,
    sample: { type: 'array', items: str, description: 'the first rows as stored (up to 3, 2 KiB each)' },
  },
  required: ['id', 'table', 'records', 'code', 'message', 'at', 'bytes', 'sample'],
};

const logPage: JSONSchema = {
  type: 'object',
  properties: {
    items: { type: 'array', items: logView },
    total: int,
    limit: int,
    offset: int,
    next_cursor: { type: ['string', 'null'], description: 'pass as cursor for the next page (stable while records are inserted); null after a short page' },
  },
  required: ['items', 'total', 'limit', 'offset', 'next_cursor'],
};

/** The admin's and the tenant's log lists: one declaration, the actor narrows a tenant to its own records. */
const logListRoute = (path: string, role: 'admin' | 'master', summary: string, tag: string): Route =>
  actorRoute(logs.list, {
    method: 'GET',
    path,
    role,
    summary,
    description:
      'A record is listed once the log writer has flushed it to ClickHouse: up to SVC_LOG_FLUSH_MS (default 1 s) after ' +
      'its 202, longer while ClickHouse is slow or down (the record waits in memory or in the spool, never lost).',
    tags: [tag],
    success: { status: 200, schema: logPage },
  });

export const logRoutes: Route[] = [
  rawRoute(logs.ingest, {
    method: 'POST',
    path: '/logs',
    role: 'public',
    summary: 'Ingest one LogRecord, a JSON array of them, or NDJSON (application/x-ndjson); 202 once accepted',
    description: 'Accepted records become readable (lists, statistics) when their batch is written: within SVC_LOG_FLUSH_MS (default 1 s) while ClickHouse keeps up.',
    tags: ['logs'],
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
      return app.ask(logs.ingest.actor, logs.ingest.message, input);
    },
  }),
  logListRoute('/admin/logs', 'admin', 'Log records, newest first, with request bodies; total is exact', 'logs'),
  actorRoute(logs.delete, {
    method: 'DELETE',
    path: '/admin/logs',
    role: 'admin',
    summary: 'Delete log records created before `before` (RFC 3339), optionally narrowed; rollups follow',
    tags: ['logs'],
    success: { status: 200, schema: { type: 'object', properties: { deleted: int }, required: ['deleted'] } },
  }),
  actorRoute(logs.pipeline, {
    method: 'GET',
    path: '/admin/logs/pipeline',
    role: 'admin',
    summary: 'The log pipeline: records accepted, stored, pending and dead-lettered, status, last insert error, newest stored record',
    tags: ['logs'],
    success: { status: 200, schema: pipelineStatus },
  }),
  actorRoute(logs.deadLetters, {
    method: 'GET',
    path: '/admin/logs/dead-letters',
    role: 'admin',
    summary: 'Rows ClickHouse refused, set apart with their error (docs/log-pipeline.md, "Dead letters")',
    tags: ['logs'],
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: { items: { type: 'array', items: deadLetter }, total: int, records: int },
        required: ['items', 'total', 'records'],
      },
    },
  }),
  actorRoute(logs.replayDeadLetter, {
    method: 'POST',
    path: '/admin/logs/dead-letters/{id}/replay',
    role: 'admin',
    summary: "Insert a dead letter's rows again; rows refused again stay in it (remains: true), with the new error",
    tags: ['logs'],
    success: {
      status: 200,
      schema: {
        type: 'object',
        properties: { id: str, stored: int, refused: int, remains: { type: 'boolean' }, error: { oneOf: [{ type: 'null' }, insertError] } },
        required: ['id', 'stored', 'refused', 'remains', 'error'],
      },
    },
  }),
  actorRoute(logs.deleteDeadLetter, {
    method: 'DELETE',
    path: '/admin/logs/dead-letters/{id}',
    role: 'admin',
    summary: 'Discard a dead letter and its rows',
    tags: ['logs'],
    success: { status: 200, schema: { type: 'object', properties: { id: str, deleted: { type: 'boolean' } }, required: ['id', 'deleted'] } },
  }),
  logListRoute('/v1/logs', 'master', "The tenant's own log records (same filters as the admin list; master_id is always the caller)", 'tenant'),
];
