/**
 * The console's only way to the service: a client typed by the OpenAPI
 * document that the build generates from the route table (openapi.d.ts), so a
 * path, parameter or response shape the console uses and the API no longer
 * has fails the build. Errors carry the envelope's message and X-Request-ID.
 */
import type { paths } from './openapi';

type Method = 'get' | 'post' | 'put' | 'delete';

/** Paths that have an operation for this method. */
export type PathOf<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: infer O } ? ([O] extends [never] ? never : O extends object ? P : never) : never;
}[keyof paths];

type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type PathParamsOf<O> = O extends { parameters: { path: infer X } } ? X : never;
type BodyOf<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Json<S> = S extends { content: { 'application/json': infer J } } ? J : S extends { content: { [k: string]: infer J } } ? J : void;
type SuccessOf<O> = O extends { responses: infer R }
  ? R extends { 200: infer S } ? Json<S> : R extends { 201: infer S } ? Json<S> : R extends { 202: infer S } ? Json<S> : void
  : never;

export interface RequestOptions<O> {
  path?: PathParamsOf<O>;
  query?: QueryOf<O>;
  body?: BodyOf<O>;
  signal?: AbortSignal;
  /** Error statuses whose body is the answer (GET /health's 503 carries the stores' state). */
  accept?: number[];
}

/** What the typed methods have checked, as the one untyped call sees it. */
interface LooseOptions {
  path?: unknown;
  query?: unknown;
  body?: unknown;
  signal?: AbortSignal;
  accept?: number[];
}

export type Success<P extends keyof paths, M extends Method> = SuccessOf<Operation<P, M>>;

/** A failed call: the envelope's code, message and field errors, and the request's id. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data: Record<string, unknown>,
    readonly requestId: string,
  ) {
    super(message);
  }
  /** Field-level messages of a 400 (`{"body.name": "is required"}` style), keyed by the field's last segment too. */
  get fields(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.data ?? {})) {
      if (typeof v !== 'string') continue;
      out[k] = v;
      out[k.split('.').pop()!] ??= v;
    }
    return out;
  }
}

export type UnauthorizedHandler = (reason: string) => void;

export function buildUrl(template: string, params?: Record<string, unknown>, query?: Record<string, unknown>): string {
  let url = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params?.[name] ?? '')));
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null || v === '') continue;
    q.set(k, String(v));
  }
  const qs = q.toString();
  if (qs) url += `?${qs}`;
  return url;
}

export class ApiClient {
  onUnauthorized: UnauthorizedHandler = () => {};
  constructor(private token: () => string | null) {}

  get<P extends PathOf<'get'>>(path: P, opts: RequestOptions<Operation<P, 'get'>> = {}): Promise<Success<P, 'get'>> {
    return this.call('GET', path, opts);
  }
  post<P extends PathOf<'post'>>(path: P, opts: RequestOptions<Operation<P, 'post'>> = {}): Promise<Success<P, 'post'>> {
    return this.call('POST', path, opts);
  }
  put<P extends PathOf<'put'>>(path: P, opts: RequestOptions<Operation<P, 'put'>> = {}): Promise<Success<P, 'put'>> {
    return this.call('PUT', path, opts);
  }
  delete<P extends PathOf<'delete'>>(path: P, opts: RequestOptions<Operation<P, 'delete'>> = {}): Promise<Success<P, 'delete'>> {
    return this.call('DELETE', path, opts);
  }
  /** The URL of a GET (for links the browser downloads itself, e.g. a CSV export; it still needs the header). */
  url<P extends PathOf<'get'>>(path: P, opts: RequestOptions<Operation<P, 'get'>> = {}): string {
    return buildUrl(path, opts.path as unknown as Record<string, unknown>, opts.query as unknown as Record<string, unknown>);
  }
  /** A GET answered as raw bytes (CSV). */
  async blob<P extends PathOf<'get'>>(path: P, opts: RequestOptions<Operation<P, 'get'>> = {}): Promise<Blob> {
    const res = await this.fetch('GET', this.url(path, opts), undefined, opts.signal);
    return res.blob();
  }

  private async call<T>(method: string, path: string, opts: LooseOptions): Promise<T> {
    const url = buildUrl(path, opts.path as Record<string, unknown>, opts.query as Record<string, unknown>);
    const res = await this.fetch(method, url, opts.body, opts.signal, opts.accept);
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async fetch(method: string, url: string, body: unknown, signal?: AbortSignal, accept?: number[]): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    const token = this.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new ApiError(0, 'network', `the service did not answer (${(err as Error).message})`, {}, '');
    }
    if (res.ok || accept?.includes(res.status)) return res;
    const requestId = res.headers.get('X-Request-ID') ?? '';
    let envelope: { code?: string; message?: string; data?: Record<string, unknown>; request_id?: string } = {};
    try {
      envelope = await res.json();
    } catch {
      /* not an envelope: keep the status line */
    }
    const error = new ApiError(
      res.status,
      envelope.code ?? String(res.status),
      envelope.message ?? res.statusText ?? `HTTP ${res.status}`,
      envelope.data ?? {},
      requestId || envelope.request_id || '',
    );
    if (res.status === 401) this.onUnauthorized(error.message);
    throw error;
  }
}
