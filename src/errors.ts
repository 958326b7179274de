/**
 * Typed errors: created here, carried across threads as plain data, rendered
 * in one place (src/http/reply.ts) into the envelope of decisions.md.
 */
export const errorStatus = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** What crosses a thread boundary. */
export interface ErrorData {
  code: ErrorCode;
  message: string;
  data: Record<string, unknown>;
  /** Extra response headers, such as Retry-After. */
  headers?: Record<string, string>;
  /** A status other than the code's usual one (405 is a bad_request with its own status). */
  status?: number;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;
  readonly headers: Record<string, string> | undefined;
  readonly status: number;

  constructor(
    code: ErrorCode,
    message: string,
    data: Record<string, unknown> = {},
    headers?: Record<string, string>,
    status?: number,
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.data = data;
    this.headers = headers;
    this.status = status ?? errorStatus[code];
  }

  toData(): ErrorData {
    return { code: this.code, message: this.message, data: this.data, headers: this.headers, status: this.status };
  }

  static fromData(d: ErrorData): AppError {
    return new AppError(d.code, d.message, d.data, d.headers, d.status);
  }
}

export const badRequest = (message: string, data: Record<string, unknown> = {}): AppError =>
  new AppError('bad_request', message, data);
export const unauthorized = (message = 'credential missing or invalid'): AppError => new AppError('unauthorized', message);
export const forbidden = (message: string, data: Record<string, unknown> = {}): AppError =>
  new AppError('forbidden', message, data);
export const notFound = (what: string, data: Record<string, unknown> = {}): AppError =>
  new AppError('not_found', `${what} not found`, data);
export const conflict = (message: string, data: Record<string, unknown> = {}): AppError =>
  new AppError('conflict', message, data);
export const methodNotAllowed = (allowed: string[]): AppError =>
  new AppError('bad_request', 'method not allowed on this path', { allowed }, { Allow: allowed.join(', ') }, 405);
export const unavailable = (message: string, retryAfterSeconds?: number): AppError =>
  new AppError('unavailable', message, {}, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : undefined);

/** The stores a request may wait on; a 503 names the one that is down. */
export type StoreName = 'postgres' | 'redis' | 'clickhouse';

/** A store that cannot be reached: 503 with `Retry-After` and the store named in `data`. */
export const storeUnavailable = (store: StoreName, retryAfterSeconds = 5): AppError =>
  new AppError('unavailable', `${store} is unavailable; retry later`, { store }, { 'Retry-After': String(retryAfterSeconds) });

/** Any thrown value as an AppError; unknown failures become `internal` without leaking their text. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isErrorData(err)) return AppError.fromData(err);
  return new AppError('internal', 'internal error');
}

export function isErrorData(v: unknown): v is ErrorData {
  return typeof v === 'object' && v !== null && typeof (v as ErrorData).code === 'string' &&
    (v as ErrorData).code in errorStatus && typeof (v as ErrorData).message === 'string';
}
