/**
 * Writes responses: every answer carries X-Request-ID, every error the
 * envelope of decisions.md. Writes after an await are corked, and nothing is
 * written to a request the client has aborted.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { AppError } from '../errors.js';
import { compileSerializer, errorEnvelope } from './schema.js';

const statusText: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  202: '202 Accepted',
  204: '204 No Content',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  414: '414 URI Too Long',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

export const statusLine = (status: number): string => statusText[status] ?? `${status} Status`;

const serializeError = compileSerializer(errorEnvelope);

/** The request's state as the writer needs it. */
export interface Exchange {
  res: HttpResponse;
  requestId: string;
  aborted: boolean;
  /** Set once a response was written. */
  done: boolean;
  /** Called when the client goes away (a streamed reply waiting to write stops). */
  onAbort?: () => void;
}

export function send(
  ex: Exchange,
  status: number,
  body: string | Buffer,
  contentType = 'application/json',
  headers?: Record<string, string>,
  closeConnection = false,
): void {
  if (ex.aborted || ex.done) return;
  ex.done = true;
  ex.res.cork(() => {
    ex.res.writeStatus(statusLine(status));
    ex.res.writeHeader('X-Request-ID', ex.requestId);
    if (!headers?.['Content-Type']) ex.res.writeHeader('Content-Type', contentType);
    if (headers) for (const k in headers) ex.res.writeHeader(k, headers[k]!);
    ex.res.end(body, closeConnection);
  });
}

export function sendError(ex: Exchange, err: AppError, closeConnection = false): void {
  const body = serializeError({ code: err.code, message: err.message, data: err.data, request_id: ex.requestId });
  send(ex, err.status, body, 'application/json', err.headers, closeConnection);
}
