/**
 * The LogRecord as the data plane sends it, and the creation time it is
 * stored with (its row is written by storage/clickhouse/logs-table.ts).
 * Unknown fields are tolerated and not stored, so a newer data plane can send
 * more than this version stores.
 */
import { compileBody } from '../../contract/validate.js';
import { logRecordSchema } from './handles.js';

/** Compiled from the record schema POST /logs declares (its handle). NUL is allowed: ClickHouse stores it, and request bodies may carry it (docs/log-pipeline.md). */
export const validateLogRecord = compileBody(logRecordSchema, { allowNul: true });

/** A validated record, as parsed. */
export type LogRecord = Record<string, unknown> & {
  key_id: number;
  master_id: number;
  status_code: number;
  error_message?: string;
  request_body?: string;
  createdAt?: string;
};

/** ClickHouse's DateTime64(3) text form, in UTC: 2026-01-02 03:04:05.678 */
export const chTime = (ms: number): string => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');

/** chTime that formats each millisecond once: every record ingested in the same millisecond shares its text. */
export function chTimeCached(): (ms: number) => string {
  let last = { ms: 0, text: '' };
  return (ms) => (ms === last.ms ? last.text : (last = { ms, text: chTime(ms) }).text);
}

/** The creation time stored for a record: its own `createdAt` when given, else the ingestion time. */
export const createdAtOf = (rec: LogRecord, ingestedAt: string): string => (rec.createdAt ? chTime(Date.parse(rec.createdAt)) : ingestedAt);
