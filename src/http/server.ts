/**
 * The uWebSockets.js front end. One catch-all handler reads what it needs
 * from the request synchronously (uWS invalidates it at the first await),
 * routes, reads the body within its limit, authenticates, validates, asks the
 * actor or runs the handler, and writes the reply. The HTTP thread does no
 * domain work.
 */
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { randomUUID } from 'node:crypto';
import { AppError, methodNotAllowed, notFound, toAppError, unavailable } from '../errors.js';
import type { AppContext } from './context.js';
import { compileRoutes, type CompiledRoute } from './compile.js';
import { send, sendError, type Exchange } from './reply.js';
import { sendStream } from './stream.js';
import { Reply, Streamed, isActorRoute, isRawRoute, type Method, type Route, type RouteInput } from './route.js';
import { Router } from './router.js';
import { parseJson, validated } from './body.js';
import type { Credentials, Principal } from './auth.js';
import { isAuditedWrite, readPathFor, type AuditEvent } from './audit.js';

const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const noCredentials: Credentials = Object.freeze({ authorization: '', internalToken: '', clientIp: '' });

/** Observers of finished requests (metrics). */
export type RequestObserver = (routePath: string, method: string, status: number, seconds: number) => void;

interface Incoming extends Exchange {
  /** Counted in the metrics and in-flight (once, whether answered or aborted). */
  finished: boolean;
  method: Method;
  path: string;
  credentials: Credentials;
  contentType: string;
  rawQuery: string;
  /** The headers the route declared (uWS's request object is gone after the first await). */
  headers: Record<string, string> | undefined;
  started: number;
}

export class HttpServer {
  private readonly app: TemplatedApp;
  private readonly router = new Router<CompiledRoute>();
  private listenSocket: us_listen_socket | null = null;
  private inFlight = 0;
  private drained: (() => void) | null = null;
  private closing = false;
  observer: RequestObserver | null = null;

  constructor(
    routes: Route[],
    private readonly ctx: AppContext,
  ) {
    for (const compiled of compileRoutes(routes)) this.router.add(compiled.route.method, compiled.route.path, compiled);
    this.app = uWS.App();
    this.app.any('/*', (res, req) => this.dispatch(res, req));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`));
        this.listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket));
      });
    });
  }

  /** Stops accepting connections, answers new requests 503 and waits for the in-flight ones. */
  async close(timeoutMs = 10_000): Promise<void> {
    this.closing = true;
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
    if (this.inFlight > 0) {
      await Promise.race([
        new Promise<void>((resolve) => (this.drained = resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
      ]);
    }
    (this.app as unknown as { close?: () => void }).close?.();
  }

  private dispatch(res: HttpResponse, req: HttpRequest): void {
    const method = req.getCaseSensitiveMethod().toUpperCase() as Method;
    const path = req.getUrl();
    const lookup = this.router.lookup(method, path);
    const found = lookup && 'found' in lookup ? lookup.found.route.route : null;
    const role = found ? found.role : 'public';
    const given = req.getHeader('x-request-id');
    const ex: Incoming = {
      res,
      requestId: given && given.length <= 128 && /^[\x21-\x7e]+$/.test(given) ? given : randomUUID(),
      aborted: false,
      done: false,
      finished: false,
      method,
      path,
      rawQuery: req.getQuery() ?? '',
      headers: found?.headers ? readHeaders(req, found.headers) : undefined,
      contentType: req.getHeader('content-type'),
      // Credentials only serve authentication: public routes (POST /logs) do not read them (the address costs 1-2 µs).
      credentials: role === 'public' ? noCredentials : this.credentials(res, req, () => ex.aborted),
      started: performance.now(),
    };
    const contentLength = req.getHeader('content-length');
    res.onAborted(() => {
      ex.aborted = true;
      ex.onAbort?.();
      this.finish(ex, '(aborted)', 499);
    });
    this.inFlight++;

    if (this.closing) return this.fail(ex, '(closing)', unavailable('the service is shutting down', 1), true);
    if (!lookup) return this.fail(ex, '(unknown)', notFound('route', { path }));
    if ('allowed' in lookup) return this.fail(ex, '(unknown)', methodNotAllowed(lookup.allowed));
    const { route: compiled, params } = lookup.found;
    const limit = compiled.bodyLimit;

    if (!bodyMethods.has(method)) return this.execute(ex, compiled, params, null);
    if (contentLength && Number(contentLength) > limit) {
      return this.fail(ex, compiled.route.path, tooLarge(limit), true);
    }
    readBody(res, limit, (body) => {
      if (body === null) return this.fail(ex, compiled.route.path, tooLarge(limit), true);
      this.execute(ex, compiled, params, body);
    });
  }

  /**
   * Runs a routed request. The common case (a public or cached principal, no
   * audit) stays synchronous up to the handler's promise and replies from its
   * settlement: no async frames or promise-of-promise hops per request.
   */
  private execute(ex: Incoming, compiled: CompiledRoute, rawParams: Record<string, string>, body: Buffer | null): void {
    const route = compiled.route;
    try {
      const authenticated = this.ctx.auth.authenticate(route.role, ex.credentials);
      if (authenticated instanceof Promise || isAuditedWrite(route, authenticated)) {
        return void this.executeAsync(ex, compiled, rawParams, body, authenticated);
      }
      const result = this.invoke(ex, compiled, rawParams, ex.rawQuery, body, authenticated);
      if (result instanceof Promise) {
        result.then(
          (value) => void this.answer(ex, compiled, value),
          (err) => this.fail(ex, route.path, err),
        );
      } else {
        this.answer(ex, compiled, result);
      }
    } catch (err) {
      this.fail(ex, route.path, err);
    }
  }

  /** Authentication that waits for the store, and audited writes (their state before, then the event). */
  private async executeAsync(
    ex: Incoming,
    compiled: CompiledRoute,
    rawParams: Record<string, string>,
    body: Buffer | null,
    authenticated: Principal | Promise<Principal>,
  ): Promise<void> {
    const route = compiled.route;
    try {
      const principal = await authenticated;
      const audited = isAuditedWrite(route, principal);
      const before = audited ? await this.readBefore(ex, route, principal) : undefined;
      const result = await this.invoke(ex, compiled, rawParams, ex.rawQuery, body, principal);
      const status = this.answer(ex, compiled, result);
      if (audited && status !== null) {
        const payload = result instanceof Reply ? result.body : result;
        const event: AuditEvent = {
          requestId: ex.requestId, principal, method: route.method, route: route.path, params: rawParams, status,
          before: before ?? null, after: route.method === 'DELETE' ? null : (payload ?? null),
        };
        this.ctx.tell('audit', 'record', event);
      }
    } catch (err) {
      this.fail(ex, route.path, err);
    }
  }

  /** Writes the reply for what a handler returned; its status, or null when serializing failed (answered as an error). */
  private answer(ex: Incoming, compiled: CompiledRoute, result: unknown): number | null {
    const route = compiled.route;
    if (result instanceof Streamed) {
      const status = route.success.status;
      sendStream(ex, status, route.produces ?? 'application/octet-stream', result).then(
        (complete) => this.finish(ex, route.path, complete ? status : 499),
        (err: unknown) => {
          this.ctx.log.error({ err, request_id: ex.requestId, route: route.path }, 'streamed reply failed');
          this.finish(ex, route.path, 500);
        },
      );
      return status;
    }
    try {
      const reply = result instanceof Reply ? result : null;
      const status = reply?.status ?? route.success.status;
      const payload = reply ? reply.body : result;
      const text = route.produces && (typeof payload === 'string' || Buffer.isBuffer(payload)) ? payload : compiled.serialize(payload);
      send(ex, status, text, route.produces ?? 'application/json', reply?.headers);
      this.finish(ex, route.path, status);
      return status;
    } catch (err) {
      this.fail(ex, route.path, err);
      return null;
    }
  }

  /** Validates and runs one route for an authenticated principal; returns what its handler returned (a value or a promise). */
  private invoke(
    ex: Incoming,
    compiled: CompiledRoute,
    rawParams: Record<string, string>,
    rawQuery: string,
    body: Buffer | null,
    principal: Principal,
  ): unknown {
    const route = compiled.route;
    if (isRawRoute(route)) {
      return route.handler(
        { body: body ?? Buffer.alloc(0), contentType: ex.contentType, requestId: ex.requestId },
        this.ctx,
      );
    }
    const input: RouteInput = {
      params: compiled.validateParams ? validated(compiled.validateParams, rawParams, 'path') : rawParams,
      query: compiled.validateQuery ? validated(compiled.validateQuery, parseQuery(rawQuery), 'query') : {},
      body: compiled.validateBody
        ? validated(compiled.validateBody, parseJson(body), 'body')
        : isActorRoute(route) && route.bodyBytes ? (body ?? Buffer.alloc(0)) : undefined,
      principal,
      requestId: ex.requestId,
      ...(ex.headers ? { headers: ex.headers } : {}),
    };
    return isActorRoute(route) ? this.ctx.ask(route.actor, route.message, input) : route.handler(input, this.ctx);
  }

  /** The state a write is about to change, read through the resource's own GET route (null when there is none). */
  private async readBefore(ex: Incoming, route: Route, principal: Principal): Promise<unknown> {
    const path = readPathFor(route, ex.path);
    if (!path) return null;
    const lookup = this.router.lookup('GET', path);
    if (!lookup || !('found' in lookup)) return null;
    try {
      const result = await this.invoke(ex, lookup.found.route, lookup.found.params, '', null, principal);
      return result instanceof Reply ? result.body : result;
    } catch {
      return null; // not there yet, or not readable: the write decides what happens
    }
  }

  private fail(ex: Incoming, routePath: string, err: unknown, closeConnection = false): void {
    const appError = toAppError(err);
    if (appError.status >= 500 && !(err instanceof AppError)) {
      this.ctx.log.error({ err, request_id: ex.requestId, route: routePath }, 'request failed');
    }
    sendError(ex, appError, closeConnection);
    this.finish(ex, routePath, appError.status);
  }

  private finish(ex: Incoming, routePath: string, status: number): void {
    if (ex.finished) return;
    ex.finished = true;
    this.observer?.(routePath, ex.method, status, (performance.now() - ex.started) / 1000);
    if (--this.inFlight === 0 && this.drained) this.drained();
  }

  /**
   * The client address is the failure limiter's key (auth.ts), read only when
   * the limiter asks for it: while no address has failed, never. A forwarded
   * address must be read now (the request object is gone after this call); the
   * socket's can be read later, as long as the response was not aborted.
   */
  private credentials(res: HttpResponse, req: HttpRequest, aborted: () => boolean): Credentials {
    const forwarded = this.ctx.config.trustProxy ? (req.getHeader('x-forwarded-for').split(',')[0]?.trim() ?? '') : '';
    let ip: string | undefined;
    return {
      authorization: req.getHeader('authorization'),
      internalToken: req.getHeader('x-internal-token'),
      get clientIp() {
        return (ip ??= forwarded || (aborted() ? '' : socketAddress(res)));
      },
    };
  }
}

function readHeaders(req: HttpRequest, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) out[name] = req.getHeader(name);
  return out;
}

function socketAddress(res: HttpResponse): string {
  const ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

const tooLarge = (limit: number): AppError =>
  new AppError('payload_too_large', `body larger than ${limit} bytes`, { limit });

/** Reads the body; null when it exceeds `limit`. uWS chunks are only valid inside the callback: copy them (once). */
function readBody(res: HttpResponse, limit: number, done: (body: Buffer | null) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  res.onData((chunk, isLast) => {
    if (!over) {
      size += chunk.byteLength;
      if (size > limit) over = true;
      else chunks.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
    }
    if (isLast) done(over ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  });
}

function parseQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!raw) return out;
  for (const [k, v] of new URLSearchParams(raw)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}
