/**
 * Reads a POST /logs body: one JSON object, a JSON array of them, or NDJSON
 * (Content-Type application/x-ndjson). Every record is validated; one bad
 * record rejects the whole request, naming each bad index and field.
 */
import { badRequest } from '../../errors.js';
import { fieldErrors } from '../../contract/validate.js';
import { validateLogRecord, type LogRecord } from './record.js';

export interface Parsed {
  records: LogRecord[];
  /** true when the body was a batch (array or NDJSON). */
  batch: boolean;
}

const maxReportedErrors = 100;

/** NDJSON bodies say so in their Content-Type; anything else is one JSON value. */
export const isNdjson = (contentType: string): boolean => contentType.toLowerCase().startsWith('application/x-ndjson');

export function parseLogBody(body: Buffer, contentType: string): Parsed {
  const ndjson = isNdjson(contentType);
  let values: unknown[];
  let batch = true;
  if (ndjson) {
    values = [];
    const textBody = body.toString('utf8');
    let line = 0;
    for (const raw of textBody.split('\n')) {
      line++;
      const s = raw.trim();
      if (s === '') continue;
      try {
        values.push(JSON.parse(s));
      } catch (err) {
        throw badRequest('invalid JSON in NDJSON body', { line, error: (err as Error).message });
      }
    }
  } else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw badRequest('invalid JSON body', { body: (err as Error).message });
    }
    if (Array.isArray(parsed)) values = parsed;
    else {
      values = [parsed];
      batch = false;
    }
  }
  if (values.length === 0) throw badRequest('no log records in the body', { records: 'is empty' });

  const errors: Record<string, unknown> = {};
  let bad = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (validateLogRecord(v)) continue;
    bad++;
    if (bad <= maxReportedErrors) {
      const fields = fieldErrors(validateLogRecord.errors);
      if (batch) errors[String(i)] = fields;
      else Object.assign(errors, fields);
    }
  }
  if (bad > 0) {
    if (batch) throw badRequest(`${bad} of ${values.length} log records are invalid; none was stored`, { invalid: bad, records: errors });
    throw badRequest('invalid log record', errors);
  }
  return { records: values as LogRecord[], batch };
}
