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
import { createServer } from 'node:net';
import { AppError, methodNotAllowed, notFound, toAppError, unavailable } from '../errors.js';
import type { AppContext } from './context.js';
import { compileRoutes, type CompiledRoute } from './compile.js';
import { send, sendError, type Exchange } from './reply.js';
import { sendStream } from './stream.js';
import { Reply, Streamed, handleOf, isActorRoute, isRawRoute, takesNdjson, type Method, type Route } from './route.js';
import type { RouteInput } from '../contract/input.js';
import { Router } from './router.js';
import { parseJson, validated } from '../contract/body.js';
import { BodyBudget, readBody } from './body-reader.js';
import { isJsonBody } from './media-type.js';
import { MAX_TARGET_BYTES, targetBytes, targetTooLong } from './head-limit.js';
import type { Credentials } from './auth.js';
import type { Principal } from '../contract/principal.js';
import { isAuditedWrite, readPathFor } from './audit.js';
import type { AuditEvent } from '../actors/audit/event.js';

/** uWS ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT: no SO_REUSEPORT. */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** The address cannot be bound: a start-up failure told in one line. */
export class ListenError extends Error {}

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
  /** Gives back what an unfinished body holds in the budget (on abort). */
  releaseBody: (() => void) | undefined;
}

export class HttpServer {
  private readonly app: TemplatedApp;
  private readonly router = new Router<CompiledRoute>();
  private listenSocket: us_listen_socket | null = null;
  private inFlight = 0;
  private drained: (() => void) | null = null;
  private closing = false;
  /** Bytes held for bodies still being received, across all requests (SVC_BODY_MEMORY_BYTES). */
  readonly bodyBudget: BodyBudget;
  observer: RequestObserver | null = null;

  constructor(
    routes: Route[],
    private readonly ctx: AppContext,
  ) {
    for (const compiled of compileRoutes(routes)) this.router.add(compiled.route.method, compiled.route.path, compiled);
    this.bodyBudget = new BodyBudget(ctx.config.bodyMemoryBytes);
    this.app = uWS.App();
    this.app.any('/*', (res, req) => this.dispatch(res, req));
  }

  /**
   * Fails early, before the stores are opened and migrated, when the address cannot be bound. `listen` checks again:
   * the port may be taken in between.
   */
  static async probe(host: string, port: number): Promise<void> {
    if (port === 0) return;
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (err: NodeJS.ErrnoException) => reject(new ListenError(`cannot listen on ${host}:${port} (SVC_HOST, SVC_PORT): ${err.code === 'EADDRINUSE' ? 'the port is in use' : (err.code ?? err.message)}`)));
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
    });
  }

  /**
   * Listens exclusively: uWS shares ports by default (SO_REUSEPORT), and a second service on the same port would
   * silently get half the requests.
   */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onListen = (socket: us_listen_socket | false): void => {
        if (!socket) return reject(new ListenError(`cannot listen on ${host}:${port} (SVC_HOST, SVC_PORT): the port is in use or the address is not available`));
        this.listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket));
      };
      // (host, port, options, cb) exists in the binding but not in its type declarations.
      (this.app.listen as unknown as (h: string, p: number, o: number, cb: typeof onListen) => void)(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, onListen);
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
      releaseBody: undefined, // set while a body is being received (declared here: one object shape per request)
    };
    const contentLength = req.getHeader('content-length');
    res.onAborted(() => {
      ex.aborted = true;
      ex.onAbort?.();
      ex.releaseBody?.();
      this.finish(ex, '(aborted)', 499);
    });
    this.inFlight++;

    if (this.closing) return this.fail(ex, '(closing)', unavailable('the service is shutting down', 1), true);
    // A body that follows is not read: the connection is closed, as after a 413. Without one it stays open.
    const target = targetBytes(path, ex.rawQuery);
    if (target > MAX_TARGET_BYTES) return this.fail(ex, '(unknown)', targetTooLong(target), declaresBody(req, contentLength));
    if (!lookup) return this.fail(ex, '(unknown)', notFound('route', { path }));
    if ('allowed' in lookup) return this.fail(ex, '(unknown)', methodNotAllowed(lookup.allowed));
    const { route: compiled, params } = lookup.found;
    const limit = compiled.bodyLimit;

    if (!bodyMethods.has(method)) return this.execute(ex, compiled, params, null);
    const hasBody = declaresBody(req, contentLength);
    if (hasBody && !isJsonBody(ex.contentType, takesNdjson(compiled.route))) {
      return this.fail(ex, compiled.route.path, unsupportedType(ex.contentType, takesNdjson(compiled.route)), true);
    }
    const declared = contentLength ? Number(contentLength) : undefined;
    ex.releaseBody = readBody(res, limit, declared, this.bodyBudget, compiled.bodyToWorker, (body) => {
      ex.releaseBody = undefined;
      if (body === 'too_large') return this.fail(ex, compiled.route.path, tooLarge(limit), true);
      if (body === 'busy') return this.fail(ex, compiled.route.path, bodiesBusy(), true);
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
        : compiled.bodyToWorker ? (body ?? Buffer.alloc(0)) : undefined,
      principal,
      requestId: ex.requestId,
      ...(ex.headers ? { headers: ex.headers } : {}),
    };
    if (!isActorRoute(route)) return route.handler(input, this.ctx);
    const handle = handleOf(route);
    return this.ctx.ask(handle.actor, handle.message, input);
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
    const forwarded = this.ctx.config.trustProxy ? forwardedClient(req.getHeader('x-forwarded-for'), this.ctx.config.trustProxyHops) : '';
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

/** Without a Content-Length a request has a body only when it is chunked (read before the first await). */
function declaresBody(req: HttpRequest, contentLength: string): boolean {
  return contentLength ? contentLength !== '0' : req.getHeader('transfer-encoding') !== '';
}

function readHeaders(req: HttpRequest, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) out[name] = req.getHeader(name);
  return out;
}

/**
 * The client address as the trusted proxies saw it: each proxy appends the
 * address it received from, so the entry `hops` places from the right is the
 * one the outermost trusted proxy wrote. Entries further left were written by
 * the client and are ignored. With fewer entries than hops, the leftmost.
 */
export function forwardedClient(header: string, hops: number): string {
  if (!header) return '';
  const entries = header.split(',');
  return entries[Math.max(0, entries.length - hops)]!.trim();
}

function socketAddress(res: HttpResponse): string {
  const ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

const tooLarge = (limit: number): AppError =>
  new AppError('payload_too_large', `body larger than ${limit} bytes`, { limit });

const bodiesBusy = (): AppError =>
  new AppError('unavailable', 'too many request bodies are being received; retry later', { reason: 'body_memory' }, {
    'Retry-After': '1',
  });

const unsupportedType = (given: string, ndjson: boolean): AppError =>
  new AppError('unsupported_media_type', 'the body must be sent as JSON', {
    content_type: given,
    accepted: ndjson ? ['application/json', 'application/x-ndjson'] : ['application/json'],
  });

function parseQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!raw) return out;
  for (const [k, v] of new URLSearchParams(raw)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}
